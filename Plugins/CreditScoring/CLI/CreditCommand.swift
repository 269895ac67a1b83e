import CreditReceiver
import CreditReceiverCLI
import CreditScoringPlugin
import Foundation
import SanadCommandLine
import SanadCore
import SanadHost

/// `sanad credit`: analyse one's own message history on the device into a signed record (Big Five, a
/// trustworthiness score, explanations citing message ids); verify, list and erase records.
public enum CreditCommand: VerbCommand {
    public static let name = "credit"
    public static let summary =
        "Analyse your messages on the device into a signed credit record; verify, history, privacy"
    public static let help = """
        Usage: sanad credit analyze [FILE|-] [--me NAMES] [--date-order dmy|mdy] [--skip-bad] [--scope all|loved-ones] [--contacts FILE]
                                    [--model MODEL [--backend ID]] [--threads N] [--out FILE] [--progress]
                                    [--background] [--consent] [--json]
               sanad credit jobs [--json]
               sanad credit cancel JOB-ID
               sanad credit resume JOB-ID
               sanad credit verify FILE|- [--json]
               sanad credit send [RECORD-ID|latest] --db CONNINFO [--timeout SECONDS] [--json]
               sanad credit history [--json]
               sanad credit status [--db CONNINFO] [--timeout SECONDS] [--json]
               sanad credit privacy [--erase [--db CONNINFO] [--timeout SECONDS] | --export FILE|-] [--json]
               sanad credit receiver setup --db ADMIN-CONNINFO
               sanad credit receiver serve --db RECEIVER-CONNINFO [--interval-ms MS] [--retention-days N] [--once]
               sanad credit receiver enroll PUBLIC-KEY --db RECEIVER-CONNINFO
               sanad credit receiver prune --days N --db RECEIVER-CONNINFO

        'analyze' reads messages (standard input when FILE is '-' or missing) in a documented line format
        ('2024-03-01T10:15 | Sender | text'), a WhatsApp export ('[01/03/2024, 10:15:00] Name: text' or
        '01/03/2024, 10:15 - Name: text') or a JSON array of {id, date, sender, isFromMe, chat, text}; streams
        them with bounded memory; computes features on the device; prints the loved ones, Big Five traits, the
        trustworthiness score and explanations (message ids and feature names, never text); and writes a record
        signed with the device's Ed25519 key (created on first use, owner-only) to the store. A malformed line is
        an error naming its line number, unless --skip-bad (each skipped line is reported). The first analysis asks
        for your consent on a terminal (piped: --consent); it is kept in the store and recorded in each record. A
        large FILE (16 MiB or more) on a terminal, without --scope or --background, offers: all, loved ones only, or
        in the background.
        'verify' checks a record offline (canonical RFC 8785 bytes, fields, Ed25519 signature).
        'send' puts the record (default: the latest) in the outbox and submits the whole outbox to PostgreSQL as
        the device role, which can only stage documents (credit_submit) and read their outcome; the separate
        receiver service ('receiver serve') verifies each against the enrolled device keys, stores it or logs the
        refusal (time, reason, key id, digest), and the confirmation (id, digest) is saved and shown. When the
        database cannot be reached, or no decision comes within --timeout seconds, the record stays in the outbox
        for the next 'send'.
        'status' shows the store, the key, the counts, the last sends (confirmations, rejections, an unreachable
        database) and, with --db (or SANAD_CREDIT_DB), the database: reachable or why not, connect and round-trip times.
        'privacy' says what is processed, stored and sent; --erase deletes every file the plugin wrote (records, outbox,
        confirmations, background jobs and their checkpoints, the event log, the device key), and with --db first
        asks the receiver, in a request signed by the device key, to delete every record of that key (when it
        cannot be reached or does not answer, nothing is erased); --export FILE (or - for standard output) writes
        everything stored about you as JSON first.
        'receiver' is the receiving party's side, run by its operator with the receiver's credentials, never on a
        device: 'setup' creates the tables, the roles sanad_device and sanad_receiver, their grants and the two
        functions devices may call (with the database owner's CONNINFO); 'serve' is the receiver service, a
        process of its own that decides staged submissions; 'enroll' registers a device's public key ('status' on
        the device shows it); 'prune' deletes records received more than --days N days ago (retention).

        Options:
          --me NAMES          comma-separated sender names that are you in line formats (default: me,أنا)
          --date-order ORDER  day-first (dmy, default) or month-first (mdy) dates in chat exports
          --skip-bad          skip malformed lines/records (reported with line numbers) instead of refusing
          --scope SCOPE       all messages (default) or only those with loved ones
          --contacts FILE     a JSON object of contact name or number → relationship ({"Mom": "mother"}): it
                              overrides the guess and makes the contact a loved one (its digest is in the record)
          --model MODEL       run the model pass with MODEL (a .gguf path or a name in the models folder): it labels
                              the prioritised messages through the structured-output API and the labels move the
                              score by at most 10 (README: model-labels-v1); the record names the model and its
                              SHA-256. Without it the deterministic method alone runs.
          --backend ID        the engine of the model pass (default: the tier's first available)
          --threads N         threads for the feature pass (default 2; the result does not depend on it)
          --out FILE          also write the signed record to FILE
          --progress          a progress line (done, rate) on standard error even when it is not a terminal
          --background        run the analysis of FILE as a job in a process of its own and return at once: its
                              progress (done of about how many, rate, ETA) is in 'jobs' at least once a second;
                              'cancel JOB-ID' stops it within a batch without writing a record; 'resume JOB-ID'
                              continues a cancelled, interrupted or failed job from its checkpoint
          --store DIR         the store folder (default: SANAD_DATA/credit-scoring, else
                              ~/.local/share/sanad/plugins/credit-scoring); the key folder is SANAD_CREDIT_KEYS,
                              else DIR/keys
          --db CONNINFO       a libpq connection string (default: SANAD_CREDIT_DB; the device role sanad_device),
                              e.g. 'host=/run/pg dbname=credit user=sanad_device'; for 'receiver' verbs the
                              receiver's (default: SANAD_RECEIVER_DB)
          --timeout SECONDS   how long a connection may take to open, a statement to run and the receiver to
                              decide a submission (default 10; connect_timeout and statement_timeout unless
                              CONNINFO sets its own), then the record waits in the outbox
          --erase             privacy: delete the local records, outbox and confirmations (with --db, first the
                              server's records of this device's key, by a signed request)
          --export FILE       privacy: write everything stored about you as JSON to FILE ('-' = standard output)
          --interval-ms MS    receiver serve: how often to look for staged submissions when none waits (default 100)
          --retention-days N  receiver serve: prune records older than N days at start and every hour
          --once              receiver serve: decide what is staged, then exit
          --days N            receiver prune: delete the records received more than N days ago (default:
                              SANAD_CREDIT_RETENTION_DAYS)
          --consent           analyze: you consent to the analysis of your messages on this device (needed once,
                              before the first analysis, when no terminal can ask; recorded in the record)
          --json              machine-readable output
        \(PluginHost.clockHelp)
        Exit status: 0 success (a record verified), 1 failure (unreadable or malformed input, a record that does
        not verify, libcrypto missing), 64 usage.

        Examples:
          sanad credit analyze messages.txt --me Maria
          cat export.json | sanad credit analyze - --json
          sanad credit verify ~/.local/share/sanad/plugins/credit-scoring/records/<id>.json
        """

    public static var verbs: [any CommandVerb.Type] {
        [
            Analyze.self, Jobs.self, Cancel.self, Resume.self, Verify.self, Send.self, History.self, Status.self,
            Privacy.self, ReceiverVerb.self,
        ]
    }

    /// `--store DIR`, else the plugin's data folder.
    static func store(_ arguments: inout Arguments) throws -> RecordStore {
        let option = try arguments.option("--store")
        return RecordStore(
            directory: try option.map { URL(fileURLWithPath: $0) } ?? PluginHost.dataDirectory(for: "credit-scoring"))
    }

    /// `--timeout SECONDS` (1…3600), else `CreditReceiver.defaultTimeout`.
    static func timeout(_ arguments: inout Arguments) throws -> Int {
        try arguments.int("--timeout", range: 1...3600) ?? CreditReceiver.defaultTimeout
    }

    /// `--db CONNINFO`, else `SANAD_CREDIT_DB`.
    static func database(_ arguments: inout Arguments) throws -> String? {
        let env = ProcessInfo.processInfo.environment["SANAD_CREDIT_DB"].flatMap { $0.isEmpty ? nil : $0 }
        return try arguments.option("--db") ?? env
    }

    /// `--contacts FILE`: a JSON object of contact name (or number) → relationship, read strictly; errors name the
    /// file and the key.
    static func contacts(_ path: String) throws -> [String: String] {
        let value: JSONValue
        do {
            value = try StrictJSON(maximumBytes: 1 << 20).parse(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        } catch {
            throw UsageError("--contacts \(path): \(error)")
        }
        guard case .object(let object) = value else {
            throw UsageError("--contacts \(path): expected an object {\"Mom\": \"mother\", \"+966…\": \"brother\"}")
        }
        var out: [String: String] = [:]
        for (name, relation) in object {
            guard let text = relation.stringValue, !text.isEmpty, !name.isEmpty else {
                throw UsageError("--contacts \(path): \"\(name)\" must map to a relationship word such as \"mother\"")
            }
            out[name] = text
        }
        return out
    }

    /// `analyze [FILE|-]`: messages in, a signed record out (or a background job).
    struct Analyze: CommandVerb {
        static let name = "analyze"
        let path: String
        let json: Bool
        let showProgress: Bool
        let background: Bool
        let consentGiven: Bool
        let job: String?
        let me: [String]?
        let dateOrderText: String?
        let scopeText: String?
        let modelPath: String?
        let backendID: String?
        let outPath: String?
        let contactsPath: String?
        let settings: AnalysisSettings
        let clock: @Sendable () -> Date
        let host: HostContext
        let store: RecordStore

        init(parsing arguments: inout Arguments) throws {
            json = arguments.flag("--json")
            let skipBad = arguments.flag("--skip-bad")
            showProgress = arguments.flag("--progress")
            background = arguments.flag("--background")
            consentGiven = arguments.flag("--consent")
            job = try arguments.option("--job")
            me = try arguments.list("--me")
            dateOrderText = try arguments.option("--date-order")
            scopeText = try arguments.option("--scope")
            modelPath = try arguments.option("--model")
            outPath = try arguments.option("--out")
            contactsPath = try arguments.option("--contacts")
            let threads = try arguments.int("--threads", range: 1...64)
            backendID = try arguments.option("--backend")
            store = try CreditCommand.store(&arguments)
            clock = try PluginHost.clock(&arguments)
            host = try HostContext.load(&arguments)
            path = try arguments.positionals(max: 1, names: "FILE").first ?? "-"
            var reader = ReaderSettings(skipBad: skipBad)
            if let me { reader.me = me }
            if let dateOrderText {
                guard let order = DateOrder(rawValue: dateOrderText) else {
                    throw UsageError("'--date-order' expects dmy or mdy, got '\(dateOrderText)'")
                }
                reader.dateOrder = order
            }
            var settings = AnalysisSettings(reader: reader, threads: threads ?? 2)
            if let scopeText {
                guard let scope = AnalysisScope(rawValue: scopeText) else {
                    throw UsageError("'--scope' expects all or loved-ones, got '\(scopeText)'")
                }
                settings.scope = scope
            }
            if let contactsPath { settings.contacts = try CreditCommand.contacts(contactsPath) }
            self.settings = settings
            if modelPath != nil { try host.validateBackendID(backendID) }
        }

        func run() async throws -> Int32 {
            let interactive = job == nil && AnalysisPrompts.interactive(path: path)
            var settings = self.settings
            settings.consent = try AnalysisPrompts.consent(
                store: store, given: consentGiven, interactive: interactive, now: clock())
            var background = self.background
            switch AnalysisPrompts.largeInput(
                path: path, interactive: interactive, scopeGiven: scopeText != nil, backgroundGiven: background,
                isJob: job != nil)
            {
            case .lovedOnes?: settings.scope = .lovedOnes
            case .background?: background = true
            case .all?, nil: break
            }
            if background {
                var options: [String] = ["--now", CreditJobs.iso(clock()), "--threads", "\(settings.threads)"]
                if settings.reader.skipBad { options.append("--skip-bad") }
                if let me { options += ["--me", me.joined(separator: ",")] }
                if let dateOrderText { options += ["--date-order", dateOrderText] }
                if settings.scope != .all { options += ["--scope", settings.scope.rawValue] }
                if let contactsPath {
                    options += ["--contacts", URL(fileURLWithPath: contactsPath).standardizedFileURL.path]
                }
                if let modelPath {
                    // The job loads the model the way this command would: by its resolved path and engine.
                    let plan = try host.planModel(
                        ModelRequest(model: modelPath, backend: backendID, contextLength: 1024))
                    options += ["--model", plan.url.path, "--backend", plan.backend.id]
                }
                if let outPath { options += ["--out", URL(fileURLWithPath: outPath).standardizedFileURL.path] }
                return try CreditJobs.start(path: path, arguments: options, store: store, now: clock())
            }
            var model: (url: URL, session: any InferenceSession)?
            if let modelPath {
                let plan = try host.planModel(ModelRequest(model: modelPath, backend: backendID, contextLength: 1024))
                printError("[model pass: \(plan.url.lastPathComponent) on \(plan.backend.id)]")
                model = (plan.url, try await host.opener.open(plan))
            }
            return try await analyze(
                path: path, settings: settings, model: model, out: outPath, store: store, now: clock(),
                progress: showProgress, job: job, json: json)
        }
    }

    /// The store and `--json`, nothing else: what the listing verbs take.
    struct Listing {
        let store: RecordStore
        let json: Bool

        init(parsing arguments: inout Arguments) throws {
            json = arguments.flag("--json")
            store = try CreditCommand.store(&arguments)
            try arguments.finish()
        }
    }

    /// `jobs`: the background analyses and their progress.
    struct Jobs: CommandVerb {
        static let name = "jobs"
        let listing: Listing
        init(parsing arguments: inout Arguments) throws { listing = try Listing(parsing: &arguments) }
        func run() async throws -> Int32 { CreditJobs.jobs(listing.store, json: listing.json) }
    }

    /// `cancel JOB-ID` and `resume JOB-ID` take the same arguments.
    struct JobID {
        let store: RecordStore
        let id: String

        init(parsing arguments: inout Arguments) throws {
            store = try CreditCommand.store(&arguments)
            guard let id = try arguments.positionals(max: 1, names: "JOB-ID").first else {
                throw UsageError("missing the job ID ('sanad credit jobs' lists them)")
            }
            self.id = id
        }
    }

    /// `cancel JOB-ID`: stops a background analysis within a batch, writing no record.
    struct Cancel: CommandVerb {
        static let name = "cancel"
        let job: JobID
        init(parsing arguments: inout Arguments) throws { job = try JobID(parsing: &arguments) }
        func run() async throws -> Int32 { try CreditJobs.cancel(job.store, id: job.id) }
    }

    /// `resume JOB-ID`: continues a cancelled, interrupted or failed job from its checkpoint.
    struct Resume: CommandVerb {
        static let name = "resume"
        let job: JobID
        init(parsing arguments: inout Arguments) throws { job = try JobID(parsing: &arguments) }
        func run() async throws -> Int32 { try CreditJobs.resume(job.store, id: job.id) }
    }

    /// `verify FILE|-`: checks a record offline.
    struct Verify: CommandVerb {
        static let name = "verify"
        let path: String
        let json: Bool

        init(parsing arguments: inout Arguments) throws {
            json = arguments.flag("--json")
            guard let path = try arguments.positionals(max: 1, names: "FILE").first else {
                throw UsageError("missing the record FILE (or '-')")
            }
            self.path = path
        }

        func run() async throws -> Int32 { try verify(path: path, json: json) }
    }

    /// The store and the database a verb that talks to the receiver needs (`--db` is required).
    struct Delivery {
        let store: RecordStore
        let db: String
        let timeout: Int

        init(parsing arguments: inout Arguments) throws {
            store = try CreditCommand.store(&arguments)
            timeout = try CreditCommand.timeout(&arguments)
            guard let db = try CreditCommand.database(&arguments) else {
                throw UsageError("missing --db CONNINFO (or SANAD_CREDIT_DB)")
            }
            self.db = db
        }
    }

    /// `send [RECORD-ID|latest] --db CONNINFO`: the outbox to the receiver.
    struct Send: CommandVerb {
        static let name = "send"
        let delivery: Delivery
        let recordID: String
        let json: Bool

        init(parsing arguments: inout Arguments) throws {
            json = arguments.flag("--json")
            delivery = try Delivery(parsing: &arguments)
            recordID = try arguments.positionals(max: 1, names: "RECORD-ID").first ?? "latest"
        }

        func run() async throws -> Int32 {
            try send(delivery.store, recordID: recordID, db: delivery.db, timeout: delivery.timeout, json: json)
        }
    }

    /// `history`: the stored records and their confirmations.
    struct History: CommandVerb {
        static let name = "history"
        let listing: Listing
        init(parsing arguments: inout Arguments) throws { listing = try Listing(parsing: &arguments) }
        func run() async throws -> Int32 { history(listing.store, json: listing.json) }
    }

    /// `status [--db CONNINFO]`: the debug status.
    struct Status: CommandVerb {
        static let name = "status"
        let store: RecordStore
        let db: String?
        let timeout: Int
        let json: Bool

        init(parsing arguments: inout Arguments) throws {
            json = arguments.flag("--json")
            store = try CreditCommand.store(&arguments)
            db = try CreditCommand.database(&arguments)
            timeout = try CreditCommand.timeout(&arguments)
            try arguments.finish()
        }

        func run() async throws -> Int32 { try status(store, db: db, timeout: timeout, json: json) }
    }

    /// `privacy [--erase [--db CONNINFO]]`: what is processed, stored and sent; erasure.
    struct Privacy: CommandVerb {
        static let name = "privacy"
        let store: RecordStore
        let erase: Bool
        let export: String?
        let db: String?
        let timeout: Int
        let json: Bool
        let clock: @Sendable () -> Date

        init(parsing arguments: inout Arguments) throws {
            json = arguments.flag("--json")
            erase = arguments.flag("--erase")
            export = try arguments.option("--export")
            store = try CreditCommand.store(&arguments)
            clock = try PluginHost.clock(&arguments)
            timeout = try CreditCommand.timeout(&arguments)
            let db = try arguments.option("--db")
            if db != nil, !erase { throw UsageError("'--db' applies to 'privacy' with --erase only") }
            if erase && export != nil { throw UsageError("--erase and --export exclude each other: export first") }
            self.db = db
            try arguments.finish()
        }

        func run() async throws -> Int32 {
            if let export {
                let text = CreditScoring.export(store, now: clock()).prettyString + "\n"
                if export == "-" {
                    writeOut(text)
                } else {
                    try Data(text.utf8).write(to: URL(fileURLWithPath: export), options: .atomic)
                    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: export)
                    printError("exported everything stored about you to \(export) (owner-only)")
                }
                return ExitCode.success
            }
            return try privacy(store, erase: erase, db: db, timeout: timeout, now: clock(), json: json)
        }
    }

    static func keyDirectory(_ store: RecordStore) -> URL { DeviceKey.directory(dataDirectory: store.directory) }

    static func analyze(
        path: String, settings: AnalysisSettings, model: (url: URL, session: any InferenceSession)?, out: String?,
        store: RecordStore, now: Date, progress: Bool, job: String? = nil, json: Bool
    ) async throws -> Int32 {
        // A background job (no terminal) reports to its state file; with --progress its log gets lines too.
        let line = ProgressLine(
            "analysing", total: nil, unit: "messages",
            mode: job == nil ? ProgressLine.mode(requested: progress) : progress ? .lines : .off)
        defer { line.finish() }
        let report = try job.map { try CreditJobs.reporter(store: store, id: $0) }
        let signed: SignedAnalysis
        do {
            signed = try await CreditScoring.analyzeAndSign(
                path: path, settings: settings, model: model?.url, session: model?.session, store: store, now: now,
                resumeFrom: try job.flatMap { try CreditJobs.checkpoint(store, id: $0, input: path) },
                checkpoint: job.map { id in CheckpointSink { CreditJobs.save($0, store: store, id: id, input: path) } }
            ) { done in
                line.update(done)
                // A job stops when asked; SIGINT ends the process. The record is written only at the end.
                return report?(done) ?? true
            }
        } catch {
            if let job { CreditJobs.finish(store: store, id: job, outcome: .failure(error)) }
            throw error
        }
        if let job { CreditJobs.finish(store: store, id: job, outcome: .success(signed)) }
        let result = signed.result
        let seconds = signed.seconds
        for problem in result.input.problems { printError("skipped line \(problem.line): \(problem.reason)") }
        if result.input.skipped > result.input.problems.count {
            printError("… and \(result.input.skipped - result.input.problems.count) more skipped lines")
        }
        if let out {
            do { try Data(signed.bytes + [10]).write(to: URL(fileURLWithPath: out)) } catch {
                throw SanadError.engine("\(out): cannot be written (\(error.localizedDescription))")
            }
        }
        let rate = seconds > 0 ? Double(result.input.messages) / seconds : 0
        if json {
            let record = try JSONValue.parse(Data(signed.bytes))
            print(
                JSONValue.object([
                    "record": record, "file": .string(signed.file.path), "digest": .string(signed.digest),
                    "traitsNote": .string(CreditScoring.traitsCaveat),
                    "lovedOnes": .array(
                        result.lovedOnes.map {
                            .object([
                                "name": .string($0.contact), "contact": .string($0.pseudonym),
                                "explanation": .string($0.explanation),
                            ])
                        }),
                    "seconds": .number(rounded3(seconds)), "messagesPerSecond": .number(rate.rounded()),
                ]).prettyString)
            return ExitCode.success
        }
        let input = result.input
        print(
            "input: \(input.messages) messages (\(input.format.isEmpty ? "empty" : input.format)), \(input.skipped) skipped, "
                + "\(input.notices) notices; \(Int(rate)) messages/s")
        if input.withoutText > 0 {
            print(
                "note: \(input.withoutText) message(s) keep their text only in attributedBody, which Sanad does not "
                    + "read: they count as messages without words")
        }
        print(
            "scope: \(settings.scope.rawValue) (\(result.counts["messages"] ?? 0) messages, \(result.counts["contacts"] ?? 0) contacts)"
        )
        print("loved ones:")
        if result.lovedOnes.isEmpty { print("  (none)") }
        for l in result.lovedOnes { print("  \(l.contact) [\(l.pseudonym)] \(l.explanation)") }
        let t = result.traits
        print(
            "Big Five: openness \(t.openness), conscientiousness \(t.conscientiousness), extraversion \(t.extraversion), "
                + "agreeableness \(t.agreeableness), neuroticism \(t.neuroticism)")
        print("  (\(CreditScoring.traitsCaveat))")
        print("trustworthiness: \(result.trustworthiness)/100 (method \(result.method))")
        print("explanations:")
        for e in result.explanations {
            let ids = e.messageIds.isEmpty ? "" : " [\(e.messageIds.joined(separator: ", "))]"
            print(
                "  \(e.feature) = \(e.value == e.value.rounded() ? String(Int(e.value)) : String(e.value)) → \(e.effect)\(ids)"
            )
        }
        print("record \(signed.recordID) signed by device key \(signed.keyID): \(signed.file.path)")
        print("record digest: \(signed.digest)")
        return ExitCode.success
    }

    static func rounded3(_ v: Double) -> Double { (v * 1000).rounded() / 1000 }

    static func verify(path: String, json: Bool) throws -> Int32 {
        let lib = try LibCrypto.shared()
        let bytes = Array(try readData(path))
        do {
            let v = try RecordVerifier.verify(bytes, lib: lib)
            if json {
                print(
                    JSONValue.object([
                        "valid": .bool(true), "recordId": .string(v.recordID), "keyId": .string(v.keyID),
                        "digest": .string(v.digest), "trustworthiness": .number(Double(v.trustworthiness)),
                        "createdAt": .string(v.createdAt),
                    ]).prettyString)
            } else {
                print("valid: record \(v.recordID) signed by key \(v.keyID); digest \(v.digest)")
            }
            return ExitCode.success
        } catch let rejection as RecordRejection {
            if json {
                print(
                    JSONValue.object([
                        "valid": .bool(false), "reason": .string(rejection.reason), "detail": .string(rejection.detail),
                    ]).prettyString)
            } else {
                printError("invalid: \(rejection.reason): \(rejection.detail)")
            }
            return ExitCode.failure
        }
    }

    static func readData(_ path: String) throws -> Data {
        if path == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SanadError.engine("cannot read '\(path)': no such file or not readable")
        }
        return data
    }

    /// What `send` did with a record: it failed verification (not sent), the server had stored it already, or the
    /// outbox went to the receiver (what it confirmed, rejected, or why it could not be reached).
    enum SendOutcome {
        case invalid(recordID: String, reason: String, detail: String)
        case alreadyStored(recordID: String, id: Int)
        case sent(Outbox.Report, milliseconds: Int)

        var isInvalid: Bool {
            if case .invalid = self { return true }
            return false
        }

        /// `send --json`'s object (an invalid record: `invalid` with the reason).
        var json: JSONValue {
            switch self {
            case .invalid(let recordID, let reason, let detail):
                return .object([
                    "invalid": .object([
                        "recordId": .string(recordID), "reason": .string(reason), "detail": .string(detail),
                    ])
                ])
            case .alreadyStored(let recordID, let id):
                return .object(["alreadyStored": .object(["id": .number(Double(id)), "recordId": .string(recordID)])])
            case .sent(let report, let milliseconds):
                return .object([
                    "confirmed": .array(
                        report.confirmed.map {
                            .object([
                                "id": .number(Double($0.id)), "recordId": .string($0.recordID),
                                "digest": .string($0.digest), "new": .bool($0.newlyStored),
                            ])
                        }),
                    "rejected": .array(
                        report.rejected.map {
                            .object(["recordId": .string($0.recordID), "reason": .string($0.reason)])
                        }
                    ),
                    "waiting": .number(Double(report.waiting)),
                    "unreachable": report.unreachable.map(JSONValue.string) ?? .null,
                    "milliseconds": .number(Double(milliseconds)),
                ])
            }
        }
    }

    /// Sends `recordID` (or the newest valid record, "latest") and whatever waits in the outbox to the receiver at
    /// `db`: each verified first (a failing outbox entry moved to rejected/, said on standard error), each outcome
    /// logged in the store's event log. `sanad credit send` and the web app's credit place call it.
    static func deliver(_ store: RecordStore, recordID: String, db: String, timeout: Int) throws -> SendOutcome {
        let lib = try LibCrypto.shared()
        // The record is verified before anything is sent; "latest" is the newest verified record by its own time.
        let records = StoredRecord.all(in: store, lib: lib)
        let chosen =
            recordID == "latest"
            ? records.last { $0.verified != nil }
            : records.first { $0.fileID == recordID }
        guard let chosen else {
            throw SanadError.engine(
                "no \(recordID == "latest" ? "valid record" : "record '\(recordID)'") in \(store.records.path) (see "
                    + "'sanad credit history')")
        }
        switch chosen.state {
        case .invalid(let reason, let detail):
            return .invalid(recordID: chosen.fileID, reason: reason, detail: detail)
        case .unverified(let reason):
            throw SanadError.engine("record \(chosen.fileID) cannot be verified (\(reason)); it is not sent")
        case .stored(let id):
            return .alreadyStored(recordID: chosen.fileID, id: id)
        case .outbox, .local:
            try store.save(
                Array(try Data(contentsOf: chosen.file)).dropLastNewline(), recordID: chosen.fileID, in: store.outbox)
        }
        // Whatever waits in the outbox is verified too; an entry that fails is moved to rejected/, never sent.
        for file in store.files(in: store.outbox) {
            let id = file.deletingPathExtension().lastPathComponent
            guard let bytes = try? Array(Data(contentsOf: file)) else { continue }
            do { _ = try RecordVerifier.verify(bytes, lib: lib) } catch let rejection as RecordRejection {
                _ = try? store.save(bytes.dropLastNewline(), recordID: id, in: store.rejected)
                store.remove(recordID: id, from: store.outbox)
                printError("invalid: \(rejection.reason): outbox entry \(id) moved to \(store.rejected.path), not sent")
            }
        }
        let start = Date()
        let report = Outbox.flush(store) { try SubmissionClient(conninfo: db, timeout: timeout) }
        let milliseconds = Int(Date().timeIntervalSince(start) * 1000)
        for c in report.confirmed {
            store.log([
                "kind": .string("confirmed"), "recordId": .string(c.recordID), "id": .number(Double(c.id)),
                "digest": .string(c.digest), "milliseconds": .number(Double(milliseconds)),
            ])
        }
        for r in report.rejected {
            store.log(["kind": .string("rejected"), "recordId": .string(r.recordID), "reason": .string(r.reason)])
        }
        if let reason = report.unreachable {
            store.log([
                "kind": .string("unreachable"), "reason": .string(reason), "waiting": .number(Double(report.waiting)),
            ])
        }
        return .sent(report, milliseconds: milliseconds)
    }

    /// The web app's sender (`CreditScoringPlugin.Sender`): a record to the receiver of `SANAD_CREDIT_DB`, as
    /// `send RECORD-ID --json` sends it; without that variable, an error naming it.
    public static let webSender: CreditScoringPlugin.Sender = { store, recordID in
        let environment = ProcessInfo.processInfo.environment
        guard let db = environment["SANAD_CREDIT_DB"], !db.isEmpty else {
            throw SanadError.engine("no receiver is configured: start sanad serve with SANAD_CREDIT_DB=CONNINFO")
        }
        return try deliver(store, recordID: recordID, db: db, timeout: 10).json
    }

    static func send(_ store: RecordStore, recordID: String, db: String, timeout: Int, json: Bool) throws -> Int32 {
        let outcome = try deliver(store, recordID: recordID, db: db, timeout: timeout)
        if json, !outcome.isInvalid { print(outcome.json.prettyString) }
        switch outcome {
        case .invalid(let recordID, let reason, let detail):
            printError("invalid: \(reason): \(detail); record \(recordID) is not sent")
            return ExitCode.failure
        case .alreadyStored(let recordID, let id):
            if !json { print("already stored as id \(id): record \(recordID)") }
            return ExitCode.success
        case .sent(let report, let milliseconds):
            if !json {
                for c in report.confirmed {
                    print(
                        "stored: record \(c.recordID) as id \(c.id), digest \(c.digest)\(c.newlyStored ? "" : " (already stored)")"
                    )
                }
                for r in report.rejected { print("rejected by the server: \(r.recordID) (\(r.reason))") }
                if let reason = report.unreachable {
                    print("not confirmed (\(reason)); \(report.waiting) record(s) wait in the outbox")
                }
                print("round trip: \(milliseconds) ms")
            }
            return report.rejected.isEmpty && report.unreachable == nil ? ExitCode.success : ExitCode.failure
        }
    }

    static func history(_ store: RecordStore, json: Bool) -> Int32 {
        let records = CreditScoring.history(store)
        if json {
            print(JSONValue.array(records.map(\.json)).prettyString)
        } else {
            if records.isEmpty { print("no records in \(store.records.path)") }
            for r in records {
                let fields =
                    r.verified.map { "\($0.createdAt)  trust \($0.trustworthiness)" } ?? "(not shown: not verified)"
                print("\(r.fileID)  \(fields)  \(r.state)")
            }
        }
        return ExitCode.success
    }

    /// The web app's debug status (`CreditScoringPlugin.StatusReport`): `status --json`'s object, the database
    /// probed when `SANAD_CREDIT_DB` is set.
    public static let webStatus: CreditScoringPlugin.StatusReport = { store in
        let db = ProcessInfo.processInfo.environment["SANAD_CREDIT_DB"].flatMap { $0.isEmpty ? nil : $0 }
        return JSONValue.object(
            Dictionary(try statusFields(store, db: db, timeout: 10), uniquingKeysWith: { a, _ in a }))
    }

    static func status(_ store: RecordStore, db: String?, timeout: Int, json: Bool) throws -> Int32 {
        let fields = try statusFields(store, db: db, timeout: timeout)
        if json {
            print(JSONValue.object(Dictionary(fields, uniquingKeysWith: { a, _ in a })).prettyString)
        } else {
            for (k, v) in fields where k != "recent" { print("\(k): \(v.stringValue ?? v.jsonString)") }
            let recent = store.recentEvents(5)
            print("recent sends:\(recent.isEmpty ? " none" : "")")
            for e in recent { print("  \(e.jsonString)") }
        }
        return ExitCode.success
    }

    /// The debug status, field by field in the order `status` prints them: the store, the processing state,
    /// the database (with `db`), libcrypto and the device key, the counts, the last five sends.
    static func statusFields(_ store: RecordStore, db: String?, timeout: Int) throws -> [(String, JSONValue)] {
        var fields: [(String, JSONValue)] = [("store", .string(store.directory.path))]
        let records = CreditScoring.history(store)
        let latest = records.last { $0.verified != nil }?.fileID
        fields.append(("processing", .string("idle; last analysis \(latest ?? "none")")))
        switch LibCrypto.load() {
        case .success(let lib):
            if let db { fields.append(("database", databaseProbe(db, timeout: timeout))) }
            fields.append(("libcrypto", .string("\(lib.version) — \(lib.path)")))
            let keyFile = keyDirectory(store).appendingPathComponent(DeviceKey.fileName)
            if FileManager.default.fileExists(atPath: keyFile.path) {
                let key = try DeviceKey.load(file: keyFile, lib: lib)
                fields.append(("deviceKey", .string(key.keyID)))
                fields.append(("publicKey", .string(Hex.encode(key.publicKey))))
            } else {
                fields.append(("deviceKey", .string("none yet (created by the first 'analyze')")))
            }
        case .failure(let error):
            fields.append(("libcrypto", .string("unavailable: \(error.reason)")))
        }
        fields.append(("records", .number(Double(records.count))))
        let invalid = records.filter { if case .invalid = $0.state { return true } else { return false } }
        fields.append(("invalid", .array(invalid.map { .string("\($0.fileID): \($0.state)") })))
        fields.append(("outbox", .number(Double(store.files(in: store.outbox).count))))
        fields.append(("confirmed", .number(Double(store.files(in: store.confirmations).count))))
        fields.append(("recent", .array(store.recentEvents(5))))
        return fields
    }

    /// The database as the debug status shows it: reachable or why not, the connection time and the median of
    /// three `SELECT 1` round trips, the server's version.
    static func databaseProbe(_ db: String, timeout: Int) -> JSONValue {
        let start = Date()
        do {
            let receiver = try SubmissionClient(conninfo: db, timeout: timeout)
            let connect = Date().timeIntervalSince(start) * 1000
            var trips: [Double] = []
            for _ in 0..<3 {
                let t = Date()
                try receiver.ping()
                trips.append(Date().timeIntervalSince(t) * 1000)
            }
            let version = try receiver.serverVersion()
            return .object([
                "reachable": .bool(true), "connectMilliseconds": .number(rounded3(connect)),
                "roundTripMilliseconds": .number(rounded3(trips.sorted()[1])),
                "serverVersion": .string(version),
            ])
        } catch {
            return .object(["reachable": .bool(false), "error": .string("\(error)")])
        }
    }

    static let privacyText = """
        Processed (on this device only): the messages you give 'analyze', read once as a stream; their text is used
        to count lexicon words and punctuation and is never written anywhere.
        Stored on this device: signed records (traits, score, explanations citing message ids and feature names,
        counts, contact pseudonyms c1, c2, …, a SHA-256 of the input messages and of the model file, settings, time)
        in the store's records/ folder; the device key (owner-only) in keys/; the outbox and confirmations.
        Sent: only a signed record, and only by 'send'. No message text, sender name or chat name is in a record.
        """

    static func privacy(_ store: RecordStore, erase: Bool, db: String?, timeout: Int, now: Date, json: Bool) throws
        -> Int32
    {
        var removed = 0
        var removedOnServer: Int?
        if erase, let db {
            // The server first, by a request signed with the device key (the device may not delete rows itself):
            // when the receiver cannot be reached or does not answer, nothing is erased and the person is told.
            let lib = try LibCrypto.shared()
            let key = try DeviceKey.loadOrCreate(directory: keyDirectory(store), lib: lib)
            let request = try ErasureRequest.sign(key: key, lib: lib, now: now)
            removedOnServer = try SubmissionClient(conninfo: db, timeout: timeout).erase(request)
        }
        if erase { removed = try store.eraseAll() }
        if json {
            var o: [String: JSONValue] = [
                "processed": .string("messages given to analyze, on the device, as a stream; never stored"),
                "stored": .string(store.directory.path), "sent": .string("signed records only, by send"),
                "erased": .number(Double(removed)),
            ]
            if let removedOnServer { o["erasedOnServer"] = .number(Double(removedOnServer)) }
            print(JSONValue.object(o).prettyString)
        } else {
            print(privacyText)
            print("store: \(store.directory.path)")
            if let removedOnServer {
                print("erased \(removedOnServer) record(s) stored by the server for this device's key")
            }
            if erase {
                // The key goes with the store; one kept elsewhere (SANAD_CREDIT_KEYS) stays.
                let keyFile = keyDirectory(store).appendingPathComponent(DeviceKey.fileName)
                let kept = FileManager.default.fileExists(atPath: keyFile.path)
                print(
                    "erased \(removed) local record file(s), the consent and the send log; "
                        + (kept
                            ? "the device key outside the store (\(keyFile.path)) is kept"
                            : "the device key too (the next analysis makes a new one for the receiver to enroll)"))
            }
        }
        return ExitCode.success
    }
}

extension Array where Element == UInt8 {
    /// Without one final newline.
    func dropLastNewline() -> [UInt8] { last == 10 ? Array(dropLast()) : self }
}
