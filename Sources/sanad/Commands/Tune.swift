import Foundation
import SanadCommandLine
import SanadCore
import SanadHost

/// `sanad tune`: measures the tier's engines on this device and orders them by what was measured.
enum TuneCommand: SanadCommand {
    static let name = "tune"
    static let summary = "Measure the tier's engines on this device and order them by speed for a chat turn"
    static let help = """
        Usage: sanad tune [--backends ID,...] [-t N] [-r REPS] [--dry-run | --clear]

        Runs every available engine of the tier's list on the tier's model with two workloads shaped like real use:
        a chat turn (a 64-token prompt, then 32 tokens generated one at a time) and a long prompt (512 tokens in
        batches). Random token ids, one warm-up, the KV cache cleared before each repetition, the median of the
        repetitions (as 'sanad bench'). The engines are then ordered by chat-turn time (the long prompt breaks
        ties) and the order is written, with the figures as each engine's 'why', to the user's config folder
        ($SANAD_TUNING_DIR, else $XDG_CONFIG_HOME/sanad/tuning, else ~/.config/sanad/tuning), never to the repo's
        configs. Commands then use that order for this tier; 'sanad config' shows it and when it was measured, and
        --no-tuning (any command) or 'sanad tune --clear' goes back to the tier file's order. A tuning run that no
        longer matches the tier (another model, other engines) is ignored, and 'sanad config' says so.

        Options:
          --backends LIST   engines to measure (default: the tier's list)
          -t, --threads N   threads (default: the config's, else the idle cores now)
          -r, --repetitions N  repetitions of each workload (default 3)
          --dry-run         measure and print, write nothing
          --clear           remove this tier's tuning file and exit
        \(HostContext.optionsHelp)
        """

    /// A chat turn: prompt tokens, then tokens generated one at a time.
    static let turnPrompt = 64
    static let turnGenerated = 32
    static let longPrompt = 512

    struct Measurement {
        var id: String
        /// Median milliseconds of a whole chat turn.
        var turnMilliseconds: Double
        /// Median tokens/s of the generated part of a turn.
        var generationRate: Double
        /// Median tokens/s of the long prompt.
        var longPromptRate: Double
    }

    static func run(_ arguments: inout Arguments) async throws -> Int32 {
        let backendList = try arguments.list("--backends")
        let threadsFlag = try arguments.int("-t", "--threads", range: 1...1024)
        let reps = try arguments.int("-r", "--repetitions", range: 1...100) ?? 3
        let dryRun = arguments.flag("--dry-run")
        let clear = arguments.flag("--clear")
        let host = try HostContext.load(&arguments)
        try arguments.finish()
        let c = host.config
        let file = EngineTuning.file(tier: c.tier)
        if clear {
            guard FileManager.default.fileExists(atPath: file.path) else {
                printError("tune: no tuning for tier '\(c.tier)' (\(file.path))")
                return ExitCode.success
            }
            try FileManager.default.removeItem(at: file)
            printError("tune: removed \(file.path); tier '\(c.tier)' uses the order of \(c.file.lastPathComponent)")
            return ExitCode.success
        }
        if let backendList { for id in backendList { try host.validateBackendID(id) } }
        let ids = backendList ?? c.backends.map(\.id)
        let threads = threadsFlag ?? c.threads ?? CPUAvailability.defaultThreads
        let model = try host.resolveModel(nil)
        let started = Date()
        printError("tune: tier '\(c.tier)', \(model.lastPathComponent), \(threadCount(threads)), \(reps) repetitions")

        var measured: [Measurement] = []
        var skipped: [(String, String)] = []
        for id in ids {
            do {
                measured.append(try await measure(id, host: host, model: model, threads: threads, reps: reps))
            } catch {
                printError("tune: \(id): not measured — \(error)")
                skipped.append((id, "\(error)"))
            }
        }
        guard !measured.isEmpty else {
            throw SanadError.engine("no engine of tier '\(c.tier)' could be measured; see 'sanad backends'")
        }
        measured.sort {
            $0.turnMilliseconds != $1.turnMilliseconds
                ? $0.turnMilliseconds < $1.turnMilliseconds : $0.longPromptRate > $1.longPromptRate
        }
        let machine = machineDescription()
        let date = ISO8601DateFormatter().string(from: started)
        print("engine        chat turn (pp\(turnPrompt)+tg\(turnGenerated))   tg t/s   pp\(longPrompt) t/s")
        for m in measured {
            print(
                m.id.padding(toLength: 14, withPad: " ", startingAt: 0)
                    + String(format: "%9.0f ms %17.1f %10.1f", m.turnMilliseconds, m.generationRate, m.longPromptRate))
        }
        for (id, why) in skipped {
            print("\(id.padding(toLength: 14, withPad: " ", startingAt: 0))not measured: \(why)")
        }
        let tuning = EngineTuning(
            tier: c.tier, model: c.model, measuredAt: date, machine: machine, threads: threads,
            engines: measured.enumerated().map { rank, m in
                EngineTuning.Engine(
                    id: m.id,
                    why: String(
                        format: "measured here (sanad tune, %@, %@, %@): rank %d of %d; chat turn pp%d+tg%d "
                            + "%.0f ms (tg %.1f t/s), pp%d %.1f t/s",
                        date, machine, threadCount(threads), rank + 1, measured.count, turnPrompt, turnGenerated,
                        m.turnMilliseconds, m.generationRate, longPrompt, m.longPromptRate))
            })
        let seconds = Date().timeIntervalSince(started)
        if dryRun {
            printError(String(format: "tune: %.0f s; --dry-run: nothing written", seconds))
        } else {
            try tuning.save(to: file)
            printError(
                String(
                    format: "tune: %.0f s; wrote %@: tier '%@' now runs %@ first", seconds, file.path, c.tier,
                    measured[0].id))
        }
        return ExitCode.success
    }

    /// Loads `id` through the host (memory checks included), warms it up and measures both workloads.
    static func measure(_ id: String, host: HostContext, model: URL, threads: Int, reps: Int) async throws
        -> Measurement
    {
        printError("tune: \(id): loading")
        let (session, _) = try await host.openModel(
            ModelRequest(
                model: model.path, backend: id, threads: threads, contextLength: longPrompt + 16,
                batchSize: host.config.batchSize))
        let vocabulary = session.model.vocabularySize
        let bos = session.model.addsBOS ? session.model.bosToken : nil
        var rng = BenchRandom(seed: 7)
        func prompt(_ n: Int) -> [Int32] { BenchCommand.promptTokens(n, bos: bos, vocabulary: vocabulary, rng: &rng) }
        session.reset()
        try session.append(prompt(16))
        try session.append([rng.token(vocabulary)])

        var turns: [Double] = []
        var generation: [Double] = []
        var long: [Double] = []
        for rep in 0..<reps {
            printError("tune: \(id): repetition \(rep + 1)/\(reps)")
            session.reset()
            let p = prompt(turnPrompt)
            let generated = (0..<turnGenerated).map { _ in rng.token(vocabulary) }
            let start = monotonicNanoseconds()
            try session.append(p)
            let promptDone = monotonicNanoseconds()
            for t in generated { try session.append([t]) }
            let end = monotonicNanoseconds()
            turns.append(Double(end - start) / 1e6)
            generation.append(Double(turnGenerated) / (Double(end - promptDone) / 1e9))

            session.reset()
            let longTokens = prompt(longPrompt)
            let longStart = monotonicNanoseconds()
            try session.append(longTokens)
            long.append(Double(longPrompt) / (Double(monotonicNanoseconds() - longStart) / 1e9))
        }
        session.reset()
        return Measurement(
            id: id, turnMilliseconds: median(turns), generationRate: median(generation), longPromptRate: median(long))
    }

    static func threadCount(_ n: Int) -> String { n == 1 ? "1 thread" : "\(n) threads" }

    static func median(_ values: [Double]) -> Double {
        let s = values.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// `Intel(R) Xeon(R) … (2 cores)` from /proc/cpuinfo.
    static func machineDescription() -> String {
        "\(cpuName()) (\(CPUAvailability.current.usableCores) cores)"
    }

    /// The CPU's `model name` in /proc/cpuinfo (`unknown CPU` where there is none).
    static func cpuName() -> String {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        return cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown CPU"
    }
}
