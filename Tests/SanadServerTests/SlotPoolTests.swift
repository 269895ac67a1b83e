import Foundation
import SanadServer
import Testing

/// Slots and the bounded queue: full queue refused, waiters served in arrival order, a waiter that leaves frees
/// its place.
@Suite("Generation slots")
struct SlotPoolTests {
    @Test("a free slot at once; with every slot busy and the queue full, queueFull; abandon leaves the queue")
    func fullAndAbandoned() {
        let pool = SlotPool([1], queueCapacity: 0)
        guard case .slot(let one) = pool.acquire(abandon: { false }) else {
            Issue.record("no slot")
            return
        }
        guard case .queueFull = pool.acquire(abandon: { false }) else {
            Issue.record("queue of 0 accepted a waiter")
            return
        }
        let queued = SlotPool([1], queueCapacity: 1)
        _ = queued.acquire(abandon: { false })
        guard case .abandoned = queued.acquire(abandon: { true }) else {
            Issue.record("an abandoning waiter got a slot")
            return
        }
        #expect(queued.load.queued == 0 && queued.load.busy == 1)
        pool.release(one)
        #expect(pool.load.busy == 0)
    }

    @Test("waiters get the slot in the order they arrived")
    func firstComeFirstServed() {
        let pool = SlotPool([0], queueCapacity: 8)
        guard case .slot(let held) = pool.acquire(abandon: { false }) else {
            Issue.record("no slot")
            return
        }
        let order = OrderLog()
        let group = DispatchGroup()
        for i in 0..<5 {
            // Each waiter is queued before the next starts.
            group.enter()
            Thread.detachNewThread {
                guard case .slot(let s) = pool.acquire(abandon: { false }) else { return group.leave() }
                order.append(i)
                pool.release(s)
                group.leave()
            }
            while pool.load.queued < i + 1 { usleep(1000) }
        }
        pool.release(held)
        group.wait()
        #expect(order.values == [0, 1, 2, 3, 4])
    }
}

/// Indices appended from several threads.
final class OrderLog: @unchecked Sendable {  // `items` is guarded by `lock`
    private let lock = NSLock()
    private var items: [Int] = []
    func append(_ i: Int) { lock.withLock { items.append(i) } }
    var values: [Int] { lock.withLock { items } }
}
