"""The shell: the `sparkdedalus` command line and the spark-submit jobs.

One module per command (`check`, `fmt`, `explain`, `run` with `run_spark`,
`show`, `diagram`), `cli` for the parser and the error handling they share,
and `jobs` for `jobs/*.py`. Nothing below the shell imports it; the errors
the commands show are `sparkdedalus.errors`.
"""
