import CreditScoringPlugin
import Foundation
import SanadCommandLine
import SanadCore

#if canImport(Glibc)
    import Glibc
#endif

/// `sanad credit analyze --background`, `jobs`, `cancel`, `resume`: an analysis in a process of its own that writes
/// its progress to `<store>/jobs/<id>.json` at least once a second, stops within a batch (about 8,000 messages) of a
/// cancel request without writing a record, and can be resumed.
///
/// The job saves a checkpoint (`<id>.checkpoint`: messages folded and the fold, at most once a second and when it
/// stops); a resumed job reads its first messages again for the input digest only and continues the fold from
/// there, so the record equals an uninterrupted run's. A checkpoint of an input that has changed since (size or
/// modification time) is not used: the job starts again from the beginning and says so.
enum CreditJobs {
    static func folder(_ store: RecordStore) -> URL { store.jobs }
    static func stateFile(_ store: RecordStore, _ id: String) -> URL {
        folder(store).appendingPathComponent("\(id).json")
    }
    static func cancelFile(_ store: RecordStore, _ id: String) -> URL {
        folder(store).appendingPathComponent("\(id).cancel")
    }
    static func checkpointFile(_ store: RecordStore, _ id: String) -> URL {
        folder(store).appendingPathComponent("\(id).checkpoint")
    }

    /// What identifies the input a checkpoint belongs to: its size and modification time.
    static func fingerprint(_ path: String) -> String {
        let a = try? FileManager.default.attributesOfItem(atPath: path)
        let size = (a?[.size] as? NSNumber)?.int64Value ?? -1
        let time = (a?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? -1
        return "\(size)@\(time)"
    }

    /// The job's saved checkpoint for `input`, when there is one and the input has not changed.
    /// A checkpoint file that cannot be read is refused, naming it (never silently started over).
    static func checkpoint(_ store: RecordStore, id: String, input: String) throws -> AnalysisCheckpoint? {
        let file = checkpointFile(store, id)
        guard let data = FileManager.default.contents(atPath: file.path) else { return nil }
        let saved: SavedCheckpoint
        do { saved = try JSONDecoder().decode(SavedCheckpoint.self, from: data) } catch {
            throw CreditError.io(
                "\(file.path) is damaged (\(error)); delete it to start the job's analysis from the beginning")
        }
        guard saved.input == fingerprint(input) else {
            printError("[the input changed since the checkpoint; the analysis starts again from the beginning]")
            return nil
        }
        printError("[resuming from message \(saved.checkpoint.messagesDone)]")
        return saved.checkpoint
    }

    /// Saves `checkpoint` of `input` for job `id` (atomically).
    static func save(_ checkpoint: AnalysisCheckpoint, store: RecordStore, id: String, input: String) {
        guard let data = try? JSONEncoder().encode(SavedCheckpoint(input: fingerprint(input), checkpoint: checkpoint))
        else { return }
        try? data.write(to: checkpointFile(store, id), options: .atomic)
    }

    struct SavedCheckpoint: Codable {
        var input: String
        var checkpoint: AnalysisCheckpoint
    }

    /// Starts the analysis of `path` as a background job with `arguments` (the analyze options, without
    /// `--background`); prints the job id.
    static func start(path: String, arguments: [String], store: RecordStore, now: Date) throws -> Int32 {
        guard path != "-" else {
            throw UsageError("--background needs an input FILE (standard input cannot be read by a background job)")
        }
        let input = URL(fileURLWithPath: path).standardizedFileURL
        guard FileManager.default.isReadableFile(atPath: input.path) else {
            throw SanadError.engine("cannot read '\(path)': no such file or not readable")
        }
        let id = "job-" + CreditScoring.recordIdentifier(now, random: (0..<4).map { _ in UInt8.random(in: 0...255) })
        let state: [String: JSONValue] = [
            "id": .string(id), "state": .string("queued"), "input": .string(input.path),
            "arguments": .array(arguments.map(JSONValue.string)), "done": .number(0),
            "estimatedTotal": .number(Double(estimateMessages(input))), "createdAt": .string(iso(now)),
        ]
        try write(state, to: stateFile(store, id))
        let pid = try launch(id: id, store: store, state: state)
        print(
            "job \(id) started (process \(pid)); 'sanad credit jobs' shows its progress, 'sanad credit cancel \(id)' stops it"
        )
        return ExitCode.success
    }

    /// Runs the job's analysis in a new process (`analyze INPUT ARGS --job ID --store DIR`), its output in
    /// `<id>.log`; returns its process id.
    static func launch(id: String, store: RecordStore, state: [String: JSONValue]) throws -> Int32 {
        guard let input = state["input"]?.stringValue else { throw SanadError.engine("job \(id) names no input") }
        let arguments = state["arguments"]?.arrayValue?.compactMap(\.stringValue) ?? []
        try? FileManager.default.removeItem(at: cancelFile(store, id))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments =
            ["credit", "analyze", input] + arguments + ["--job", id, "--store", store.directory.path]
        let log = folder(store).appendingPathComponent("\(id).log")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        var running = state
        running["state"] = .string("running")
        running["pid"] = .number(Double(process.processIdentifier))
        try write(running, to: stateFile(store, id))
        return process.processIdentifier
    }

    /// The progress callback of the job's own process: the state file at least once a second; false (stop) when a
    /// cancel was asked for.
    static func reporter(store: RecordStore, id: String) throws -> (Int) -> Bool {
        var state = try read(stateFile(store, id))
        let total = state["estimatedTotal"]?.doubleValue ?? 0
        let start = Date()
        var last = Date.distantPast
        state["state"] = .string("running")
        state["pid"] = .number(Double(getpid()))
        return { done in
            let cancel = FileManager.default.fileExists(atPath: cancelFile(store, id).path)
            if cancel || Date().timeIntervalSince(last) >= 1 {
                last = Date()
                let seconds = max(1e-3, last.timeIntervalSince(start))
                let rate = Double(done) / seconds
                state["done"] = .number(Double(done))
                state["rate"] = .number(rate.rounded())
                state["eta"] =
                    rate > 0 && total > Double(done) ? .number(((total - Double(done)) / rate).rounded()) : .null
                state["updatedAt"] = .string(iso(last))
                try? write(state, to: stateFile(store, id))
            }
            return !cancel
        }
    }

    /// The job's end as its process sees it: done with the record, or cancelled, or failed.
    static func finish(store: RecordStore, id: String, outcome: Result<SignedAnalysis, any Error>) {
        guard var state = try? read(stateFile(store, id)) else { return }
        state["updatedAt"] = .string(iso(Date()))
        state["pid"] = nil
        switch outcome {
        case .success(let signed):
            try? FileManager.default.removeItem(at: checkpointFile(store, id))
            state["state"] = .string("done")
            state["done"] = .number(Double(signed.result.input.messages))
            state["recordId"] = .string(signed.recordID)
            state["digest"] = .string(signed.digest)
            state["eta"] = .number(0)
        case .failure(let error):
            let cancelled = (error as? CreditError) == .cancelled
            state["state"] = .string(cancelled ? "cancelled" : "failed")
            if !cancelled { state["error"] = .string("\(error)") }
        }
        try? FileManager.default.removeItem(at: cancelFile(store, id))
        try? write(state, to: stateFile(store, id))
    }

    /// Every job, oldest first; a job whose process is gone without an end is `interrupted`.
    static func list(_ store: RecordStore) -> [[String: JSONValue]] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder(store).path)) ?? []
        return files.filter { $0.hasSuffix(".json") }.sorted().map { name in
            let file = folder(store).appendingPathComponent(name)
            // A damaged state file is listed as such, named, never dropped from the list.
            guard var state = try? read(file) else {
                return [
                    "id": .string(String(name.dropLast(5))), "state": .string("damaged"),
                    "error": .string("\(file.path) is not a job's JSON state; delete it"),
                ]
            }
            if state["state"]?.stringValue == "running", let pid = state["pid"]?.intValue, kill(Int32(pid), 0) != 0 {
                state["state"] = .string("interrupted")
            }
            return state
        }
    }

    static func jobs(_ store: RecordStore, json: Bool) -> Int32 {
        let all = list(store)
        if json {
            print(JSONValue.array(all.map(JSONValue.object)).prettyString)
            return ExitCode.success
        }
        if all.isEmpty { print("no jobs in \(folder(store).path)") }
        for j in all {
            let done = j["done"]?.intValue ?? 0
            let total = j["estimatedTotal"]?.intValue ?? 0
            var line = "\(j["id"]?.stringValue ?? "?")  \(j["state"]?.stringValue ?? "?")  \(done)/~\(total) messages"
            if let rate = j["rate"]?.intValue { line += ", \(rate) messages/s" }
            if let eta = j["eta"]?.intValue, j["state"]?.stringValue == "running" { line += ", about \(eta) s left" }
            if let record = j["recordId"]?.stringValue { line += ", record \(record)" }
            if let error = j["error"]?.stringValue { line += ": \(error)" }
            print(line)
        }
        return ExitCode.success
    }

    /// Asks job `id` to stop and waits (up to 5 s) until its process says it has.
    static func cancel(_ store: RecordStore, id: String) throws -> Int32 {
        let state = try read(stateFile(store, id))
        guard state["state"]?.stringValue == "running" || state["state"]?.stringValue == "queued" else {
            print("job \(id) is \(state["state"]?.stringValue ?? "?"); nothing to cancel")
            return ExitCode.success
        }
        FileManager.default.createFile(atPath: cancelFile(store, id).path, contents: Data())
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            let now = list(store).first { $0["id"]?.stringValue == id }?["state"]?.stringValue
            if now == "cancelled" || now == "done" || now == "failed" || now == "interrupted" {
                print("job \(id): \(now ?? "?")\(now == "cancelled" ? "; no record was written" : "")")
                return now == "cancelled" ? ExitCode.success : ExitCode.failure
            }
            usleep(50_000)
        }
        print("job \(id): asked to stop; it has not answered yet ('sanad credit jobs' shows when it does)")
        return ExitCode.failure
    }

    /// Runs a cancelled, interrupted or failed job again with its input and settings.
    static func resume(_ store: RecordStore, id: String) throws -> Int32 {
        var state = try read(stateFile(store, id))
        let now = list(store).first { $0["id"]?.stringValue == id }?["state"]?.stringValue ?? "?"
        guard ["cancelled", "interrupted", "failed"].contains(now) else {
            throw UsageError("job \(id) is \(now); only a cancelled, interrupted or failed job can be resumed")
        }
        state["error"] = nil
        let input = state["input"]?.stringValue ?? ""
        let from = try checkpoint(store, id: id, input: input)?.messagesDone ?? 0
        if from == 0 { state["done"] = .number(0) }
        let pid = try launch(id: id, store: store, state: state)
        print(
            "job \(id) resumed (process \(pid)) "
                + (from > 0 ? "from its checkpoint at message \(from)" : "from the beginning (no usable checkpoint)"))
        return ExitCode.success
    }

    /// Lines in the file: the number of messages of a line format, an upper bound for a JSON export.
    static func estimateMessages(_ url: URL) -> Int {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return 0 }
        defer { try? handle.close() }
        var lines = 0
        while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            lines += chunk.reduce(0) { $0 + ($1 == 10 ? 1 : 0) }
        }
        return lines
    }

    static func read(_ url: URL) throws -> [String: JSONValue] {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw SanadError.engine("no job at \(url.path) ('sanad credit jobs' lists them)")
        }
        guard let object = try? JSONValue.parse(data).objectValue else {
            throw SanadError.engine("\(url.path) is damaged (not a job's JSON state); delete it")
        }
        return object
    }

    static func write(_ state: [String: JSONValue], to url: URL) throws {
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(JSONValue.object(state).prettyString.utf8).write(to: url, options: .atomic)
    }

    static func iso(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }
}
