"""What the timeline draws: lanes and cells, the viewport arithmetic, navigation between events."""
