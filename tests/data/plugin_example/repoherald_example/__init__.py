"""An example repoherald plugin: an ``example:`` source and an ``example`` publisher."""
