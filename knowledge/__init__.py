"""The KB lifecycle (docs/ARCHITECTURE.md §6): ingest, chunking, the KU tree, source notices to the
kb-plugins, the index ledger and its repair, KB operations and archives.

It sits above the kernel: it orchestrates sd- and kb-plugins through the kernel's supervisor and writes
the kernel's store, so it imports `mrpvm.kernel`, never the reverse. The shells open a kernel through
`knowledge.context.open_context`, which lets this layer repair its part before anything else runs.
"""
