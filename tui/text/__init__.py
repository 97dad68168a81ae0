"""Text for the terminal: numbers and times as torch prints them, long names cut to a column."""
