import Foundation

/// A Prometheus histogram: cumulative counts per upper bound, sum and count.
struct Histogram {
    let bounds: [Double]
    var counts: [Int]
    var sum = 0.0
    var count = 0

    init(bounds: [Double]) {
        self.bounds = bounds
        counts = Array(repeating: 0, count: bounds.count)
    }

    mutating func observe(_ value: Double) {
        for (i, b) in bounds.enumerated() where value <= b { counts[i] += 1 }
        sum += value
        count += 1
    }

    func render(_ name: String, help: String) -> String {
        var out = "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        for (b, c) in zip(bounds, counts) { out += "\(name)_bucket{le=\"\(b)\"} \(c)\n" }
        out += "\(name)_bucket{le=\"+Inf\"} \(count)\n\(name)_sum \(sum)\n\(name)_count \(count)\n"
        return out
    }
}

/// The server's counters, rendered in the Prometheus text format at `/metrics`.
public final class ServerMetrics: @unchecked Sendable {  // every field is guarded by `lock`
    private let lock = NSLock()
    private var requests: [String: Int] = [:]
    private var promptTokens = 0
    private var generatedTokens = 0
    private var firstToken = Histogram(bounds: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10])
    private var interToken = Histogram(bounds: [0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1])

    public init() {}

    /// One answered request.
    public func request(path: String, status: Int) {
        lock.withLock { requests["endpoint=\"\(path)\",status=\"\(status)\"", default: 0] += 1 }
    }

    public func tokens(prompt: Int, generated: Int) {
        lock.withLock {
            promptTokens += prompt
            generatedTokens += generated
        }
    }

    public func timeToFirstToken(_ seconds: Double) { lock.withLock { firstToken.observe(seconds) } }
    public func interTokenLatency(_ seconds: Double) { lock.withLock { interToken.observe(seconds) } }

    /// The text `/metrics` serves, with the slot pool's current load.
    public func render(slots: Int, busy: Int, queued: Int) -> String {
        lock.withLock {
            var out = "# HELP sanad_requests_total Requests answered, by endpoint and status.\n"
            out += "# TYPE sanad_requests_total counter\n"
            for (labels, n) in requests.sorted(by: { $0.key < $1.key }) {
                out += "sanad_requests_total{\(labels)} \(n)\n"
            }
            out += "# HELP sanad_prompt_tokens_total Prompt tokens read.\n# TYPE sanad_prompt_tokens_total counter\n"
            out += "sanad_prompt_tokens_total \(promptTokens)\n"
            out += "# HELP sanad_generated_tokens_total Tokens generated.\n"
            out += "# TYPE sanad_generated_tokens_total counter\nsanad_generated_tokens_total \(generatedTokens)\n"
            out += firstToken.render(
                "sanad_time_to_first_token_seconds", help: "Seconds from a request's start to its first token.")
            out += interToken.render("sanad_inter_token_seconds", help: "Seconds between consecutive tokens.")
            out += "# HELP sanad_queue_depth Requests waiting for a slot.\n# TYPE sanad_queue_depth gauge\n"
            out += "sanad_queue_depth \(queued)\n"
            out += "# HELP sanad_slots_busy Generation slots in use.\n# TYPE sanad_slots_busy gauge\n"
            out += "sanad_slots_busy \(busy)\n"
            out += "# HELP sanad_slots_total Generation slots.\n# TYPE sanad_slots_total gauge\n"
            out += "sanad_slots_total \(slots)\n"
            return out
        }
    }
}
