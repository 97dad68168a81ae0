"""The Textual plumbing the app, its screens and widgets share: messages, key bindings and the keymap,
the workers' pacing hook, where a failure goes."""
