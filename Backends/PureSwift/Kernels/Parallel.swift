import Foundation
import Synchronization

/// Splits `0..<count` into at most `threads` contiguous chunks and runs `body` on each, concurrently when
/// `threads > 1` (on the calling thread and the workers of `WorkerPool.shared`).
@inline(__always)
public func parallelChunks(_ count: Int, threads: Int, _ body: (Range<Int>) -> Void) {
    parallelChunksIndexed(count, threads: threads) { _, range in body(range) }
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
        WorkerPool.shared.run(chunks) { chunk in
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
/// sleep on a condition variable until the next loop. The calling thread runs chunk 0 itself and spins until the workers
/// are done. A loop started while another is running (from a worker, or from a second session on another
/// thread) runs on its caller alone, so nesting and concurrent sessions are safe.
final class WorkerPool: @unchecked Sendable {  // @unchecked: its jobs and counters behind its locks
    static let shared = WorkerPool()

    /// Loads of the generation counter before a waiting worker goes to sleep.
    private static let spinLimit = 200_000
    /// Loads of an atomic before a waiting thread starts yielding its CPU between loads.
    private static let yieldAfter = 2_000

    private let generation = Atomic<Int>(0)
    private let pending = Atomic<Int>(0)
    private let busy = Atomic<Bool>(false)
    private let sleepers = Atomic<Int>(0)
    private let condition = NSCondition()
    private let spawnLock = NSLock()
    /// The current loop: set by the caller before it publishes a new generation, read by workers after.
    nonisolated(unsafe) private var job: (Int) -> Void = { _ in }
    nonisolated(unsafe) private var chunks = 0
    nonisolated(unsafe) private var workerCount = 0

    /// Runs `job(0)` … `job(chunks - 1)`, chunk 0 on the calling thread, and returns when all are done.
    func run(_ chunks: Int, _ job: @escaping (Int) -> Void) {
        guard chunks > 1, busy.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
        else {
            for chunk in 0..<chunks { job(chunk) }
            return
        }
        ensureWorkers(chunks - 1)
        self.job = job
        self.chunks = chunks
        pending.store(workerCount, ordering: .relaxed)
        generation.add(1, ordering: .sequentiallyConsistent)
        if sleepers.load(ordering: .sequentiallyConsistent) > 0 {
            condition.lock()
            condition.broadcast()
            condition.unlock()
        }
        job(0)
        var spins = 0
        while pending.load(ordering: .acquiring) > 0 {
            // On an oversubscribed machine the worker may be waiting for this very CPU: let it run.
            spins += 1
            if spins > Self.yieldAfter { sched_yield() }
        }
        self.job = { _ in }
        busy.store(false, ordering: .releasing)
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
            let thread = Thread { [unowned self] in self.workerLoop(index: index, seen: seen) }
            thread.name = "sanad-worker-\(index)"
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    private func workerLoop(index: Int, seen start: Int) -> Never {
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
            if index < chunks { job(index) }
            pending.subtract(1, ordering: .releasing)
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
