"""Where commits come from."""
