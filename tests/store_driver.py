"""A writer process for the kill-and-resume test (not a test module).

    python tests/store_driver.py STORE PROGRAM TICKS NETWORK SESSION [COMMIT_EVERY]

Runs PROGRAM with `Engine(spark).run(..., store=STORE, resume=True)` (as
`sparkdedalus run --store STORE --resume` does) on a local session with Delta
Lake (SESSION=delta: Spark's Delta Lake commits) or without (SESSION=plain: the
delta-rs fallback, as in a user's session that cannot load Delta), committing
every COMMIT_EVERY ticks (default 1), printing one line per step on stdout
(flushed): `open K` once the store is open (K: its last committed tick),
`begin T` before the commit ending at tick T, `done T` after it, `finished` at
the end. The test kills this process (and its JVM) with SIGKILL
at random moments.
"""

from __future__ import annotations

import os
import sys


def main() -> int:
    store_path, program_path, ticks, network_spec, session = sys.argv[1:6]
    commit_every = int(sys.argv[6]) if len(sys.argv) > 6 else 1
    from sparkdedalus import Program
    from sparkdedalus.network import Network
    from sparkdedalus.spark.engine import Engine
    from sparkdedalus.plumbing.session import local_session
    from sparkdedalus.store.store import Store

    opened, committed = Store.open.__func__, Store.commit

    def open_and_say(cls, *args, **kwargs):
        store = opened(cls, *args, **kwargs)
        print(f"open {store.last_tick}", flush=True)
        return store

    def commit_and_say(self, tick, pack, previous=None):
        print(f"begin {tick}", flush=True)
        done = committed(self, tick, pack, previous)
        print(f"done {tick}", flush=True)
        return done

    Store.open = classmethod(open_and_say)
    Store.commit = commit_and_say
    spark = local_session(master="local[1]", app_name="store-driver", delta=session == "delta",
                          extra_conf={"spark.local.dir": os.environ.get("STORE_DRIVER_LOCAL_DIR", "/tmp")})
    Engine(spark).run(Program.from_files(program_path), int(ticks), network=Network.parse(network_spec),
                      store=store_path, resume=True, commit_every=commit_every)
    print("finished", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
