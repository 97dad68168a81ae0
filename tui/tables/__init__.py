"""One definition per table: columns, headers, JSON fields, sort keys and footers, for the CLI and the viewer."""
