"""Writing reports where readers find them."""
