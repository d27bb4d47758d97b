"""Timing for the GPU benches: the median of CUDA-event times of `fn` after a warmup (torch imported lazily, so
that the benches' staging runs without a GPU)."""


def median_ms(fn, warmup=5, reps=20):
    import torch
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    return sorted(times)[len(times) // 2]


def loop_ms(fn, calls=10, warmup=3, reps=7):
    """Milliseconds a call of `fn` takes when `calls` of them are queued back to back: the median over `reps`
    loops of CUDA-event time / calls. Unlike median_ms, a host-side overhead per call is hidden wherever
    the GPU's own work is longer."""
    import torch
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(calls):
            fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) / calls)
    return sorted(times)[len(times) // 2]


def interleaved_medians(fns, rounds, timers=None):
    """Per name of `fns` (callables), the median over `rounds` rounds of its median_ms ("call") and loop_ms
    ("loop"), or of the timers named in `timers` (name -> timer of a callable), every round timing each once in
    an order that rotates between rounds (over len(fns) rounds each callable takes each place once), so that
    clock ramps, the power cap and temperature drift affect all alike; and the per-round times themselves."""
    import statistics
    kinds = timers or {"call": median_ms, "loop": loop_ms}
    times = {n: {k: [] for k in kinds} for n in fns}
    names = list(fns)
    for r in range(rounds if names else 0):
        for n in names[r % len(names):] + names[:r % len(names)]:
            for k, timer in kinds.items():
                times[n][k].append(timer(fns[n]))
    return {n: {m: statistics.median(t) for m, t in ts.items()} for n, ts in times.items()}, times


def compiled_flex_attention():
    """torch.compile(flex_attention), made once, with torch's recompile limits raised: each entry's functions
    are a recompile, and past the default limit of 8 torch silently runs FlexAttention unfused (the scores
    materialised), which would time the wrong thing."""
    global _FLEX
    if _FLEX is None:
        import torch
        from torch import _dynamo
        from torch.nn.attention.flex_attention import flex_attention
        _dynamo.config.cache_size_limit = 4096
        _dynamo.config.recompile_limit = 4096
        _dynamo.config.accumulated_recompile_limit = 4096
        _FLEX = torch.compile(flex_attention, dynamic=False)
    return _FLEX


_FLEX = None
