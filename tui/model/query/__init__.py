"""The trace queried from outside the viewer: tables of columns for SQL and the API, finding events, one event's
neighbourhood; every event named by the same id (its index in the loaded trace)."""
