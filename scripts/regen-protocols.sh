#!/usr/bin/env bash
# Regenerate the scalable protocols of examples/protocols/ from their base programs
# with `sparkdedalus rewrite`: the decouplings and partitionings of the scaling paper's
# section 5.2 (examples/protocols/README.md). tests/test_protocols.py runs these same
# commands and compares with the shipped files. SPARKDEDALUS overrides the command.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SD="${SPARKDEDALUS:-$ROOT/.venv/bin/sparkdedalus}"
cd "$ROOT"

# voting: broadcasters (ballot) and collectors (the rest) leave the leader, then they
# and the participants run on 4 partitions each, by ballot
"$SD" rewrite examples/protocols/voting.ded \
    --decouple leader:ballot:broadcasters \
    --decouple leader:votes,nvotes,complete,waiting,anyno,result,replied:collectors \
    --partition broadcasters:4 --partition collectors:4 --partition participant:4 \
    --out examples/protocols/voting_scalable.ded

# two-phase commit: each participant's ackers (lines 74-76: commit, abort) leave it; the
# vote requesters, committers and enders leave the coordinator; all but the coordinator
# run on 4 partitions each, by transaction id
"$SD" rewrite examples/protocols/two_phase_commit.ded \
    --decouple participant:74,75,76:ackers \
    --decouple coordinator:prepare:requesters \
    --decouple coordinator:yes,nyes,decide_commit,commit_log,commit,sent_commit,abort,answer:committers \
    --decouple coordinator:acks,nacks,end_log:enders \
    --partition requesters:4 --partition committers:4 --partition enders:4 \
    --partition participant:4 --partition ackers:4 \
    --out examples/protocols/two_phase_commit_scalable.ded
