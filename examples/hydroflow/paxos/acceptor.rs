// A Paxos-like acceptor: it promises the highest ballot it has seen, logs what it accepts
// and answers the proposer with its highest ballot (p2b).
use hydroflow_datalog::datalog;

pub async fn run(my_id: Vec<u32>, proposer_ids: Vec<u32>, from_proposer: Source, to_proposer: Sink) {
    let df = datalog!(
        r#"
        .input myID `repeat_iter(my_id.clone()) -> map(|p| (p,))`
        .input proposer `repeat_iter(proposer_ids.clone()) -> map(|p| (p,))`
        .async p2a `null::<(u32,i64,u32)>()` `source_stream(from_proposer) -> map(|x| deserialize_from_bytes::<(u32,i64,u32)>(x.unwrap().1).unwrap())`
        .async p2b `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(to_proposer)` `null::<(u32,u32,i64,u32,u32)>()`
        .output logSize `for_each(|v| println!("{:?}", v))`

        .persist promised
        .persist log
        promised(b) :- p2a(b, slot, v)
        maxPromised(max(b)) :- promised(b)
        minPromised(min(b)) :- promised(b)
        log(b, slot, v) :- p2a(b, slot, v), maxPromised(m), (b >= m)
        logSize(count(*), sum(slot), minb) :- log(b, slot, v), minPromised(minb)
        evenSlot(slot, slot * 2 - 1) :- log(b, slot, v), (slot % 2 == 0)
        p2b@p(i, b, slot, v, m) :~ p2a(b, slot, v), maxPromised(m), proposer(p), myID(i)
        "#
    );
    launch_flow(df).await
}
