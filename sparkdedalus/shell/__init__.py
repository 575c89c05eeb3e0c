"""The shell: the `sparkdedalus` command line and the spark-submit jobs.

One module per command (`check`, `fmt`, `explain`, `run` with `run_spark`,
`show`, `diagram`, `equiv`, `rewrite`, `faults`), `cli` for the parser and the
error handling they share, `options` for the `type=` functions of their
options, `stats` for what `run` and `run_spark` both report, and `jobs` for
`jobs/*.py`. Nothing below the shell imports it; the errors
the commands show are `sparkdedalus.errors`.
"""
