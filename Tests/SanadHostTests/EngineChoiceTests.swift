import Foundation
import SanadCore
import SanadHost
import SanadTestSupport
import Testing

@Suite("CPU availability and the default thread count")
struct CPUAvailabilityTests {
    @Test(
        "idle cores are the usable cores less the busy ones, at least one",
        arguments: [
            (2, nil, 0.0, 2), (2, nil, 0.4, 2), (2, nil, 0.6, 1), (2, nil, 1.9, 1), (2, nil, 7.0, 1),
            (8, 2.5, 0.0, 3), (8, 0.5, 0.0, 1), (4, nil, 1.5, 2),
        ] as [(Int, Double?, Double, Int)])
    func idleCores(allowed: Int, quota: Double?, busy: Double, expected: Int) {
        let cpu = CPUAvailability(allowedCores: allowed, quotaCores: quota, busyCores: busy)
        #expect(cpu.idleCores == expected, "\(cpu.description)")
        #expect(cpu.description.hasPrefix("\(expected) of \(cpu.usableCores) cores idle"))
    }

    @Test("measured on this machine: the affinity mask is read and the numbers are in range")
    func measured() {
        let cpu = CPUAvailability.measure(window: 0.05)
        #expect(cpu.allowedCores >= 1 && cpu.allowedCores <= ProcessInfo.processInfo.activeProcessorCount)
        #expect(cpu.busyCores >= 0 && cpu.busyCores <= Double(cpu.allowedCores) + 0.01)
        #expect((1...cpu.usableCores).contains(cpu.idleCores))
    }

    @Test("a sample started early leaves out this process's own work in its window (a core spun for 0.2 s)")
    func ownWorkIsNotOtherWork() {
        func cpuSeconds() -> Double {
            var t = timespec()
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t)
            return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
        }
        let started = ContinuousClock.now
        let cpuBefore = cpuSeconds()
        let sample = CPUAvailability.Sample.start()
        var x: UInt64 = 1
        while ContinuousClock.now < started + .milliseconds(200) { x = x &* 6_364_136_223_846_793_005 &+ 1 }
        #expect(x != 0)
        let all = sample.finish(window: 0.1, excludingOwnTime: false)
        let others = sample.finish(window: 0.1)
        let elapsed = started.duration(to: .now)
        // The spin's share of the window in cores (about one on a quiet machine, less when others share the CPU).
        let own =
            (cpuSeconds() - cpuBefore)
            / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
        #expect(all.busyCores >= 0.5 * own, "\(all.description), own \(own) cores")
        #expect(
            others.busyCores <= max(0, all.busyCores - 0.5 * own),
            "\(others.description) vs \(all.description), own \(own) cores")
    }
}

@Suite("Engine order measured by sanad tune")
struct EngineTuningTests {
    func config(model: String = "m.gguf") throws -> HostConfiguration {
        let dir = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("tier-4gb.json")
        try Data(
            """
            {"tier": "4gb", "minimumMemoryMiB": 2, "memoryBudgetMiB": 1, "model": "\(model)", "contextLength": 64,
             "backends": [{"id": "llama", "why": "tier file"},
                          {"id": "blas", "options": {"cache-weights": true}, "why": "tier file"},
                          {"id": "pure-swift", "why": "tier file"}]}
            """.utf8
        ).write(to: url)
        return try HostConfiguration.load(
            from: url, backendIDs: ["llama", "blas", "pure-swift"], embeddingIDs: [], pluginIDs: [])
    }

    let tuning = EngineTuning(
        tier: "4gb", model: "m.gguf", measuredAt: "2026-11-24T00:00:00Z", machine: "test CPU (2 cores)", threads: 2,
        engines: [.init(id: "pure-swift", why: "rank 1"), .init(id: "blas", why: "rank 2")])

    @Test("the measured order comes first with its figures; options stay; unmeasured engines follow")
    func applied() throws {
        let c = tuning.applied(to: try config())
        #expect(c.backends.map(\.id) == ["pure-swift", "blas", "llama"])
        #expect(c.backends.map(\.why) == ["rank 1", "rank 2", "tier file"])
        #expect(c.backends[1].options["cache-weights"] == .bool(true))
    }

    @Test("a tuning for another tier, model or engine set does not apply, and says why")
    func mismatch() throws {
        let config = try config()
        #expect(tuning.mismatch(with: config) == nil)
        #expect(tuning.mismatch(with: try self.config(model: "other.gguf"))?.contains("other.gguf") == true)
        var other = tuning
        other.tier = "8gb"
        #expect(other.mismatch(with: config)?.contains("tier '8gb'") == true)
        other = tuning
        other.engines.append(.init(id: "cuda", why: ""))
        #expect(other.mismatch(with: config)?.contains("not the tier's") == true)
    }

    @Test("saved and read back equal; a damaged file is an error naming it")
    func roundTrip() throws {
        let dir = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = EngineTuning.file(tier: "4gb", in: dir.appendingPathComponent("nested"))
        try tuning.save(to: url)
        #expect(try EngineTuning.load(from: url) == tuning)
        try Data(#"{"tier":"4gb","engines":[]}"#.utf8).write(to: url)
        #expect {
            try EngineTuning.load(from: url)
        } throws: {
            "\($0)".contains(url.path) && "\($0)".contains("model")
        }
    }
}
