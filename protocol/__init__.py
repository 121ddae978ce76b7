"""The MRP-VM wire contract (protocol v1): envelope types, CNL grammar, framing, manifests.

Both the kernel and plugins import only this package to talk to each other.
"""
