"""MRP-VM plugins."""
