// The partial_rates microbenchmark's replica: it keeps the client's orders (they partition
// by the order's id) and prices each with the current rate, the one of the highest epoch
// (the rates, joined with every order, must be replicated on every partition).
use hydroflow_datalog::datalog;

pub async fn run(my_id: Vec<u32>, peers: Vec<u32>, rate_source: Source, to_replica: Source, from_replica: Sink) {
    let df = datalog!(
        r#"
        .input myID `repeat_iter(my_id.clone()) -> map(|p| (p,))`
        .input leader `repeat_iter(peers.clone()) -> map(|p| (p,))`
        .async rateToReplica `null::<(u32,u32)>()` `source_stream(rate_source) -> map(|x| deserialize_from_bytes::<(u32,u32)>(x.unwrap().1).unwrap())`
        .async orderToReplica `null::<(u32,i64,u32)>()` `source_stream(to_replica) -> map(|x| deserialize_from_bytes::<(u32,i64,u32)>(x.unwrap().1).unwrap())`
        .async quoteFromReplica `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(from_replica)` `null::<(u32,u32,i64,u32)>()`

        .persist rates
        .persist orders
        rates(epoch, r) :- rateToReplica(epoch, r)
        currentEpoch(max(e)) :- rates(e, r)
        currentRate(r) :- currentEpoch(e), rates(e, r)
        orders(client, id, amount) :- orderToReplica(client, id, amount)
        quoteFromReplica@addr(i, client, id, amount * r) :~ orderToReplica(client, id, amount), currentRate(r), leader(addr), myID(i)
        "#
    );
    launch_flow(df).await
}
