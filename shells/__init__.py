"""The shells over the kernel: the `mrpvm` CLI, the HTTP daemon, the eval runner, plugin tooling, the demo
and the local-LLM launcher. They import the kernel; the kernel never imports them."""
