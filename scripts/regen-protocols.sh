#!/usr/bin/env bash
# Regenerate the scalable protocols of examples/protocols/ from their base programs
# with `sparkdedalus rewrite`: the decouplings and partitionings of the scaling paper's
# section 5.2 (examples/protocols/README.md). tests/test_protocols.py runs these same
# commands and compares with the shipped files. SPARKDEDALUS overrides the command.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SD="${SPARKDEDALUS:-$ROOT/.venv/bin/sparkdedalus}"
cd "$ROOT"

# voting: every rewrite the analyses allow within the leader and the participants
# (--auto): the collectors and the broadcasters leave the leader, which relays the
# client's requests to the broadcasters; all but the leader run on 4 partitions, by ballot
"$SD" rewrite examples/protocols/voting.ded --auto leader,participant --partitions 4 \
    --out examples/protocols/voting_scalable.ded

# two-phase commit: likewise within the coordinator and the participants: the vote
# requesters, committers and enders leave the coordinator, which relays the begin events
# to the requesters; the voters, ackers, abort and inquiry handlers leave the participant,
# which relays the inquiries; all parts run on 4 partitions, by transaction id
"$SD" rewrite examples/protocols/two_phase_commit.ded --auto coordinator,participant --partitions 4 \
    --out examples/protocols/two_phase_commit_scalable.ded

# MultiPaxos: the p2a proxy leaders (functional decoupling of the proposer's p2a sends)
# and the p2b proxy leaders (mutually independent decoupling of the proposer's p2b
# collection: the p2b carries the command and a rejection is a nack of its own, which the
# proposer reads), each on 3 partitions by slot, and the acceptors partially partitioned
# by slot (B.3) on 3 partitions, each acceptor's ballot replicated and its p1a ordered by
# a coordinator, its p1b sealed per partition (B.4) (docs/protocols.md, "ScalablePaxos")
"$SD" rewrite examples/protocols/paxos.ded --decouple proposer:p2a:p2a_proxy_leaders \
    --decouple proposer:accepted_by,accepts,committed,decide,announced:p2b_proxy_leaders \
    --partition p2a_proxy_leaders:3 --partition p2b_proxy_leaders:3 --partition acceptor:3 \
    --out examples/protocols/paxos_scalable.ded
