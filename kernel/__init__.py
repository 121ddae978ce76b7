"""MRP-VM kernel."""
