import Foundation
import SanadChat
import SanadCore
import SanadSigning

/// The credit place in the web app (`sanad serve`, at `/credit`): the page (`Resources/credit.html`) and its calls,
/// each what `sanad credit` does:
///
///     GET  /credit                          the page
///     GET  /credit/api/state                the consent kept (or null), the traits' caveat, the receiver
///     POST /credit/api/start {"messages": TEXT | "data": BASE64, "name", "scope": "all|loved-ones", "consent"}
///                                           a background analysis (`analyze`), its job id; the first needs
///                                           `consent: true` (as `--consent`), kept in the store after that
///     GET  /credit/api/job?id=JOB           its progress (messages read, of about how many), then the result:
///                                           the signed record's text, traits, score, explanations, loved ones
///     POST /credit/api/cancel {"id": JOB}   stops it; nothing is written
///     POST /credit/api/verify {"record": TEXT}   the record checked offline (`verify`)
///     GET  /credit/api/status               the debug status (`status --json`: the receiver's reachability and
///                                           latency, the key, the counts, the recent sends and errors)
///     POST /credit/api/send {"id": RECORD}  the record to the receiver of `SANAD_CREDIT_DB` (`send --json`'s answer)
///     GET  /credit/api/record?id=RECORD     the signed record file, as a download
struct CreditWebPlace: WebPlace {
    let plugin: CreditScoringPlugin
    let jobs: CreditWebJobs
    let prefix = "/credit"

    func respond(to request: WebRequest) async throws -> WebReply {
        let route = String(request.path.dropFirst(prefix.count))
        if route == "" || route == "/" {
            guard let page = Self.page else {
                throw CreditPlaceError("the credit page (Resources/credit.html) is not shipped; rebuild sanad")
            }
            return .html(page)
        }
        let body = request.method == "POST" ? try JSONValue.parse(Data(request.body)) : .object([:])
        func parameter(_ name: String) throws -> String {
            guard let value = request.query[name] ?? body[name]?.stringValue, !value.isEmpty else {
                throw CreditPlaceError("\(request.path) needs '\(name)'")
            }
            return value
        }
        switch (request.method, route) {
        case ("GET", "/api/state"): return .json(state())
        case ("POST", "/api/start"): return .json(.object(["job": .string(try start(body))]))
        case ("GET", "/api/job"):
            guard let job = jobs[try parameter("id")] else {
                throw CreditPlaceError("no analysis '\(try parameter("id"))' (the server keeps the last 8)")
            }
            return .json(job.json)
        case ("POST", "/api/cancel"):
            jobs[try parameter("id")]?.cancel()
            return .json(.object(["ok": .bool(true)]))
        case ("POST", "/api/send"):
            guard let sender = plugin.sender else {
                throw CreditPlaceError("this host cannot send records (no receiver client linked)")
            }
            let id = try parameter("id")
            return .json(try await Task.detached { try sender(plugin.store, id) }.value)
        case ("GET", "/api/status"):
            guard let report = plugin.statusReport else {
                throw CreditPlaceError("this host gives no debug status (sanad credit status does)")
            }
            return .json(try await Task.detached { try report(plugin.store) }.value)
        case ("POST", "/api/verify"):
            return .json(try CreditScoringPlugin.verification(Array(try parameter("record").utf8)))
        case ("GET", "/api/record"):
            let id = try parameter("id")
            guard id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }),
                let data = FileManager.default.contents(
                    atPath: plugin.store.records.appendingPathComponent("\(id).json").path)
            else { throw CreditPlaceError("no record '\(id)' on this device") }
            return WebReply(contentType: "application/json", body: Array(data), fileName: "\(id).json")
        default:
            throw CreditPlaceError(
                "no call \(request.method) \(request.path); see Plugins/CreditScoring/README.md (the web app)")
        }
    }

    /// What the page shows before an analysis.
    func state() -> JSONValue {
        let environment = ProcessInfo.processInfo.environment
        return .object([
            "consent": Consent.load(plugin.store)?.json ?? .null, "traitsNote": .string(CreditScoring.traitsCaveat),
            "receiverConfigured": .bool(plugin.sender != nil && !(environment["SANAD_CREDIT_DB"] ?? "").isEmpty),
        ])
    }

    /// Starts the analysis of the pasted text or uploaded file as a background job; returns its id.
    func start(_ body: JSONValue) throws -> String {
        var settings = AnalysisSettings(reader: ReaderSettings(me: plugin.me))
        if let text = body["scope"]?.stringValue {
            guard let scope = AnalysisScope(rawValue: text) else {
                throw CreditPlaceError("'scope' must be all or loved-ones, not '\(text)'")
            }
            settings.scope = scope
        }
        if let kept = Consent.load(plugin.store) {
            settings.consent = kept
        } else {
            guard body["consent"]?.boolValue == true else {
                throw CreditPlaceError(
                    "the person's consent is needed before the first analysis (the page asks it; 'consent': true)")
            }
            let consent = Consent(givenAt: plugin.now(), how: "web")
            try consent.save(in: plugin.store)
            settings.consent = consent
        }
        let bytes: [UInt8]
        if let text = body["messages"]?.stringValue {
            bytes = Array(text.utf8)
        } else if let data = body["data"]?.stringValue.flatMap({ Data(base64Encoded: $0) }) {
            bytes = Array(data)
        } else {
            throw CreditPlaceError("/credit/api/start needs 'messages' (text) or 'data' (a file's bytes in base64)")
        }
        guard bytes.contains(where: { !($0 == 32 || $0 == 10 || $0 == 13 || $0 == 9) }) else {
            throw CreditPlaceError("there are no messages to analyse: paste them or choose a file")
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sanad-credit-\(UUID())")
        try Data(bytes).write(to: file)
        try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        // Line formats: about one message a line (a JSON or SQLite input shows progress without a total).
        let lines =
            bytes.first == UInt8(ascii: "[") || bytes.first == UInt8(ascii: "{") || !bytes.allSatisfy { $0 != 0 }
            ? nil : bytes.reduce(0) { $0 + ($1 == 10 ? 1 : 0) } + (bytes.last == 10 ? 0 : 1)
        let job = jobs.add(CreditWebJob(estimate: lines))
        let (plugin, store) = (plugin, plugin.store)
        Task.detached {
            defer { try? FileManager.default.removeItem(at: file) }
            do {
                let signed = try await CreditScoring.analyzeAndSign(
                    path: file.path, settings: settings, model: nil, store: store, now: plugin.now()
                ) { read in job.progress(read) }
                job.finish(.success(Self.result(signed)))
            } catch {
                job.finish(.failure(error))
            }
        }
        return job.id
    }

    /// The finished analysis as the page shows it: the signed record (its exact text, and parsed), and what only the
    /// device shows: the loved ones by name.
    static func result(_ signed: SignedAnalysis) -> JSONValue {
        // The file as saved (the canonical bytes and a final newline): what the download gives.
        let saved = FileManager.default.contents(atPath: signed.file.path).map { [UInt8]($0) } ?? signed.bytes
        let text = String(decoding: saved, as: UTF8.self)
        return .object([
            "recordId": .string(signed.recordID), "digest": .string(signed.digest), "keyId": .string(signed.keyID),
            "recordText": .string(text), "record": (try? JSONValue.parse(Data(signed.bytes))) ?? .null,
            "traitsNote": .string(CreditScoring.traitsCaveat),
            "messages": .number(Double(signed.result.input.messages)),
            "lovedOnes": .array(
                signed.result.lovedOnes.map {
                    .object([
                        "contact": .string($0.contact), "pseudonym": .string($0.pseudonym), "label": .string($0.label),
                        "explanation": .string($0.explanation),
                    ])
                }),
        ])
    }

    /// The page, in the plugin's shipped resources (`Resources/credit.html`).
    static let page = shippedWebPage(
        "credit.html", bundle: "Sanad_CreditScoringPlugin.resources",
        sourceFolder: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent())
}

/// One background analysis of the web app: messages read so far, a cancel flag the analysis checks after every
/// batch, then its result or error.
final class CreditWebJob: @unchecked Sendable {  // the mutable state is guarded by `lock`
    let id = UUID().uuidString.lowercased()
    /// About how many messages the input holds (its lines), when it is a line format.
    let estimate: Int?
    private let lock = NSLock()
    private var read = 0
    private var cancelled = false
    private var outcome: Result<JSONValue, any Error>?

    init(estimate: Int?) { self.estimate = estimate }

    /// Records `count` messages read; false once cancelled (the analysis stops).
    func progress(_ count: Int) -> Bool {
        lock.withLock {
            read = count
            return !cancelled
        }
    }

    func cancel() { lock.withLock { cancelled = true } }

    func finish(_ result: Result<JSONValue, any Error>) { lock.withLock { outcome = result } }

    var json: JSONValue {
        lock.withLock {
            var o: [String: JSONValue] = [
                "id": .string(id), "read": .number(Double(read)),
                "estimate": estimate.map { .number(Double($0)) } ?? .null,
            ]
            switch outcome {
            case nil: o["state"] = .string(cancelled ? "cancelling" : "running")
            case .success(let result)?:
                o["state"] = .string("done")
                o["result"] = result
            case .failure(let error)?:
                let wasCancelled = (error as? CreditError) == .cancelled
                o["state"] = .string(wasCancelled ? "cancelled" : "failed")
                o["error"] = .string("\(error)")
            }
            return .object(o)
        }
    }
}

/// The web app's analyses, the newest 8 kept.
final class CreditWebJobs: @unchecked Sendable {  // `jobs` is guarded by `lock`
    private let lock = NSLock()
    private var jobs: [CreditWebJob] = []

    func add(_ job: CreditWebJob) -> CreditWebJob {
        lock.withLock {
            jobs.append(job)
            if jobs.count > 8 { jobs.removeFirst() }
        }
        return job
    }

    subscript(id: String) -> CreditWebJob? { lock.withLock { jobs.first { $0.id == id } } }
}

/// A request the credit place cannot answer, with what to send instead.
struct CreditPlaceError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
