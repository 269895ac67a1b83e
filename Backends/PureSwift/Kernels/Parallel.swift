import Foundation
import Synchronization

/// Splits `0..<count` into at most `threads` contiguous chunks and runs `body` on each, concurrently when
/// `threads > 1` (on the calling thread and the workers of `WorkerPool.shared`).
@inline(__always)
public func parallelChunks(_ count: Int, threads: Int, _ body: (Range<Int>) -> Void) {
    parallelChunksIndexed(count, threads: threads) { _, range in body(range) }
}

/// `parallelChunks` in `pieces` chunks (at least `threads`) whose lengths are multiples of `granularity` but for the
/// last, each claimed by whichever thread is free (`WorkerPool`): for the long loops of a prompt, where two equal
/// halves do not finish together (a thread shares its core with another process, or misses its cache more) and the
/// first one done waited for the other; now it waits at most for one piece.
public func parallelPieces(
    _ count: Int, threads: Int, pieces: Int, granularity: Int = 1, _ body: (Range<Int>) -> Void
) {
    let units = (count + granularity - 1) / max(1, granularity)
    let chunks = min(max(pieces, threads), units)
    guard threads > 1, chunks > 1 else {
        if count > 0 { body(0..<count) }
        return
    }
    withoutActuallyEscaping(body) { body in
        WorkerPool.shared.run(chunks, threads: threads) { chunk in
            let start = min(count, units * chunk / chunks * granularity)
            let end = min(count, units * (chunk + 1) / chunks * granularity)
            if start < end { body(start..<end) }
        }
    }
}

/// `parallelChunks` for an elementwise step over `rows` rows of `width` values (a norm, a residual, an activation):
/// on the calling thread alone when there is too little work to be worth waking the workers (a generated token).
@inline(__always)
public func parallelRows(_ rows: Int, width: Int, threads: Int, _ body: (Range<Int>) -> Void) {
    parallelChunks(rows, threads: rows * width < 1 << 14 ? 1 : threads, body)
}

/// Like `parallelChunks`, but also tells each chunk its index (0..<threads) so it can use per-worker scratch.
@inline(__always)
public func parallelChunksIndexed(_ count: Int, threads: Int, _ body: (Int, Range<Int>) -> Void) {
    let chunks = min(max(1, threads), count)
    if chunks <= 1 {
        if count > 0 { body(0, 0..<count) }
        return
    }
    withoutActuallyEscaping(body) { body in
        WorkerPool.shared.run(chunks, threads: chunks) { chunk in
            let start = count * chunk / chunks
            let end = count * (chunk + 1) / chunks
            if start < end { body(chunk, start..<end) }
        }
    }
}

/// A persistent pool of worker threads for the engine's fork/join loops.
///
/// A token of generation runs a few hundred parallel loops (every matrix product, attention, activation
/// quantization), each a few microseconds long, so the cost of starting one matters: `concurrentPerform` takes
/// 17–30 µs, this pool well under one. Workers wait for work by spinning on an atomic generation counter for a
/// while (about a millisecond, enough to cover the gaps between loops and between tokens; after the first few
/// microseconds yielding the CPU between checks, so that an oversubscribed machine still makes progress), then
/// sleep on a condition variable until the next loop.
///
/// Chunks are claimed, not assigned: the caller and every awake worker take the next unclaimed chunk until none is
/// left, and the caller returns when every chunk is done. On a busy machine a worker the scheduler has not run yet
/// simply finds nothing left to claim, so a loop never waits for a thread that has not started it (with fixed
/// assignment, every loop waited a whole scheduler time slice for such a thread: 1.9 instead of 20 tokens/s with
/// two busy processes on two cores). A loop started while another is running (from a worker, or from a second
/// session on another thread) runs on its caller alone, so nesting and concurrent sessions are safe.
final class WorkerPool: @unchecked Sendable {  // @unchecked: its jobs and counters behind its locks and atomics
    static let shared = WorkerPool()

    /// Loads of the generation counter before a waiting worker goes to sleep.
    private static let spinLimit = 200_000
    /// Loads of an atomic before a waiting thread starts yielding its CPU between loads.
    private static let yieldAfter = 2_000

    /// The loop on offer: its generation's low 31 bits (bits 32…62), its chunk count (bits 16…31) and the next
    /// unclaimed chunk (bits 0…15), in one atomic so that a claim can never take a chunk of a loop other than the
    /// one it saw.
    private let offer = Atomic<Int>(0)
    /// Chunks of the current loop finished.
    private let done = Atomic<Int>(0)
    private let generation = Atomic<Int>(0)
    private let busy = Atomic<Bool>(false)
    private let sleepers = Atomic<Int>(0)
    private let condition = NSCondition()
    private let spawnLock = NSLock()
    /// The current loop: set by the caller before it publishes the offer, read by a thread after its claim.
    nonisolated(unsafe) private var job: (Int) -> Void = { _ in }
    nonisolated(unsafe) private var workerCount = 0

    /// Runs `job(0)` … `job(chunks - 1)` on the calling thread and at least `threads - 1` workers (more when an
    /// earlier loop asked for more), and returns when all are done.
    func run(_ chunks: Int, threads: Int, _ job: @escaping (Int) -> Void) {
        guard chunks > 1, chunks < 1 << 16,
            busy.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
        else {
            for chunk in 0..<chunks { job(chunk) }
            return
        }
        ensureWorkers(min(chunks, threads) - 1)
        self.job = job
        done.store(0, ordering: .relaxed)
        let next = generation.load(ordering: .relaxed) + 1
        offer.store(Self.tag(next) << 32 | chunks << 16, ordering: .releasing)
        generation.store(next, ordering: .sequentiallyConsistent)
        if sleepers.load(ordering: .sequentiallyConsistent) > 0 {
            condition.lock()
            condition.broadcast()
            condition.unlock()
        }
        runClaimedChunks(of: next)
        var spins = 0
        while done.load(ordering: .acquiring) < chunks {
            // A worker holding a chunk may be waiting for this very CPU: let it run.
            spins += 1
            if spins > Self.yieldAfter { sched_yield() }
        }
        self.job = { _ in }
        busy.store(false, ordering: .releasing)
    }

    /// The part of a generation the offer carries (wraps after 2^31 loops, long after any older offer is gone).
    private static func tag(_ generation: Int) -> Int { generation & 0x7FFF_FFFF }

    /// Claims and runs chunks of loop `generation` until none is left (or another loop is on offer).
    private func runClaimedChunks(of generation: Int) {
        let tag = Self.tag(generation)
        while true {
            var current = offer.load(ordering: .acquiring)
            var chunk = 0
            while true {
                guard current >> 32 == tag else { return }
                chunk = current & 0xFFFF
                guard chunk < (current >> 16) & 0xFFFF else { return }
                let (exchanged, original) = offer.compareExchange(
                    expected: current, desired: current + 1, ordering: .acquiringAndReleasing)
                if exchanged { break }
                current = original
            }
            job(chunk)
            done.add(1, ordering: .releasing)
        }
    }

    /// Starts workers until there are at least `count` (called only by the thread holding `busy`).
    private func ensureWorkers(_ count: Int) {
        guard workerCount < count else { return }
        spawnLock.lock()
        defer { spawnLock.unlock() }
        while workerCount < count {
            workerCount += 1
            let index = workerCount
            let seen = generation.load(ordering: .acquiring)
            let thread = Thread { [unowned self] in self.workerLoop(seen: seen) }
            thread.name = "sanad-worker-\(index)"
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    private func workerLoop(seen start: Int) -> Never {
        var seen = start
        while true {
            var spins = 0
            var current = generation.load(ordering: .acquiring)
            while current == seen {
                spins += 1
                if spins >= Self.spinLimit {
                    current = sleepUntilChanged(from: seen)
                    break
                }
                if spins > Self.yieldAfter { sched_yield() }
                current = generation.load(ordering: .acquiring)
            }
            seen = current
            runClaimedChunks(of: current)
        }
    }

    /// Blocks until the generation differs from `seen`; returns the new one.
    private func sleepUntilChanged(from seen: Int) -> Int {
        condition.lock()
        sleepers.add(1, ordering: .sequentiallyConsistent)
        var current = generation.load(ordering: .sequentiallyConsistent)
        while current == seen {
            condition.wait()
            current = generation.load(ordering: .sequentiallyConsistent)
        }
        sleepers.subtract(1, ordering: .sequentiallyConsistent)
        condition.unlock()
        return current
    }
}
