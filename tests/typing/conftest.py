# The corpus files are kernel code that is only type-checked, never imported.
collect_ignore_glob = ["pass/*", "fail/*"]
