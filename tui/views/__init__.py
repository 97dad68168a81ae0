"""The viewer's views as data: the registry of views, the background planner, which view a screen shows, how
the main screen shares its rows. Screens use them; they stand on the widgets."""
