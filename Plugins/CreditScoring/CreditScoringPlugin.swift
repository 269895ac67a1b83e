import Foundation
import SanadChat
import SanadCore
import SanadSigning

/// A finished analysis, signed and saved in the store.
public struct SignedAnalysis: Sendable {
    public var result: AnalysisResult
    public var recordID: String
    /// The record's canonical bytes (RFC 8785) with its signature.
    public var bytes: [UInt8]
    public var file: URL
    /// SHA-256 of `bytes`, hex.
    public var digest: String
    public var keyID: String
    public var seconds: Double
}

/// The analysis pipeline the CLI and the plugin's tools share: read, analyse, sign with the device key, save.
public enum CreditScoring {
    /// What the traits are and are not, in one line: shown wherever they are.
    public static let traitsCaveat = TraitModel.caveat

    /// Reads `path` ('-' = standard input), analyses it with `settings`, signs the record with the device key of
    /// `store` (created on first use) and saves it in `store.records`. `progress` gets the messages read so far;
    /// returning false stops the analysis (nothing is written). The record names `model` by id and SHA-256 when one
    /// is given.
    /// With `session` (the engine running `model`), the model pass labels the prioritised messages and the labels
    /// are folded into the result (`ModelPass`).
    public static func analyzeAndSign(
        path: String, settings: AnalysisSettings, model: URL?, session: (any InferenceSession)? = nil,
        store: RecordStore, now: Date, resumeFrom: AnalysisCheckpoint? = nil,
        checkpoint: CheckpointSink? = nil, progress: (Int) -> Bool = { _ in true }
    ) async throws -> SignedAnalysis {
        let lib = try LibCrypto.shared()
        let key = try DeviceKey.loadOrCreate(directory: DeviceKey.directory(dataDirectory: store.directory), lib: lib)
        let modelIdentity = try model.map { try ModelIdentity.of(file: $0, lib: lib) }
        let digest = try SHA256Digest(lib)
        let start = Date()
        var result = try CreditAnalysis.run(
            path: path, settings: settings, digest: digest, resumeFrom: resumeFrom, checkpoint: checkpoint,
            progress: progress)
        if let session {
            result = ModelPass.combine(
                result, labels: try await ModelPass.label(result.prioritisedTexts, session: session))
        }
        let recordID = recordIdentifier(now, random: try lib.random(6))
        let body = try CreditRecord.body(
            result, inputSHA256: try digest.hex(), model: modelIdentity, createdAt: now, recordID: recordID, lib: lib)
        let bytes = try CreditRecord.sign(body, key: key, lib: lib)
        let file = try store.save(bytes, recordID: recordID, in: store.records)
        return SignedAnalysis(
            result: result, recordID: recordID, bytes: bytes, file: file,
            digest: try SHA256Digest.hex(bytes, lib: lib), keyID: key.keyID, seconds: Date().timeIntervalSince(start))
    }

    /// `20241125T051500Z-<12 hex>`: sorts by creation time; unique by its random part.
    public static func recordIdentifier(_ now: Date, random: [UInt8]) -> String {
        let iso = ISO8601DateFormatter().string(from: now).replacingOccurrences(of: "-", with: "")
            .replacingOccurrences(of: ":", with: "")
        return "\(iso)-\(Hex.encode(random))"
    }

    /// Everything the store holds about the person, as JSON (`privacy --export`): every record as stored (with
    /// its verification state), confirmations, the outbox and rejected entries, background jobs, the event log and
    /// the device key's public half. Message texts are never in the store, so never here.
    public static func export(_ store: RecordStore, now: Date) -> JSONValue {
        func json(_ file: URL) -> JSONValue {
            (FileManager.default.contents(atPath: file.path)).flatMap { try? JSONValue.parse($0) }
                ?? .string("(unreadable: \(file.path))")
        }
        func folder(_ url: URL) -> JSONValue {
            .array(
                store.files(in: url).map {
                    .object(["id": .string($0.deletingPathExtension().lastPathComponent), "content": json($0)])
                })
        }
        let records = history(store).map { r -> JSONValue in
            guard case .object(var o) = r.json else { return r.json }
            o["record"] = json(r.file)
            return .object(o)
        }
        let events =
            (try? String(contentsOf: store.events, encoding: .utf8))?.split(separator: "\n")
            .compactMap { try? JSONValue.parse(String($0)) } ?? []
        let key = DeviceKey.directory(dataDirectory: store.directory).appendingPathComponent(DeviceKey.fileName)
        var keyInfo: JSONValue = .null
        if FileManager.default.fileExists(atPath: key.path), case .success(let lib) = LibCrypto.load(),
            let device = try? DeviceKey.load(file: key, lib: lib)
        {
            keyInfo = .object(["keyId": .string(device.keyID), "publicKey": .string(Hex.encode(device.publicKey))])
        }
        return .object([
            "format": .string("sanad-credit-export"), "exportedAt": .string(ISO8601DateFormatter().string(from: now)),
            "store": .string(store.directory.path), "records": .array(records),
            "confirmations": folder(store.confirmations), "outbox": folder(store.outbox),
            "rejected": folder(store.rejected), "jobs": folder(store.jobs), "events": .array(events),
            "deviceKey": keyInfo,
        ])
    }

    /// The records in `store`, oldest first, each verified, with where it stands (`StoredRecord.State`).
    public static func history(_ store: RecordStore) -> [StoredRecord] {
        switch LibCrypto.load() {
        case .success(let lib): return StoredRecord.all(in: store, lib: lib)
        case .failure(let error): return StoredRecord.all(in: store, lib: nil, missing: "libcrypto: \(error.reason)")
        }
    }
}

/// Credit scoring hosted in the chat host (`credit-scoring`): the analysis and the offline check as tools, for the
/// host or a model to call, with the same store as `sanad credit` (the plugin's data folder). It adds nothing to the
/// chat itself: a person's messages are given as a file, never typed into the chat.
///
/// Options (host config): `store` (a folder; default: the plugin's data folder), `me` (an array of sender names that
/// are the person in line formats; default `me`, `أنا`).
public final class CreditScoringPlugin: FeaturePlugin {
    public static let pluginID = "credit-scoring"
    public static let optionKeys = ["store", "me"]

    public let id = CreditScoringPlugin.pluginID
    public let store: RecordStore
    public let me: [String]
    let now: @Sendable () -> Date
    /// Sends a stored record (by id) to the receiver and says what came of it (`sanad credit send --json`'s
    /// object); nil when the host cannot send (the plugin knows no receiver: the host that links one passes it).
    public typealias Sender = @Sendable (_ store: RecordStore, _ recordID: String) throws -> JSONValue
    let sender: Sender?
    /// The debug status (`sanad credit status --json`'s object: the database's reachability and latency when one is
    /// configured, the key, the counts, the recent sends and errors); nil when the host gives none.
    public typealias StatusReport = @Sendable (_ store: RecordStore) throws -> JSONValue
    let statusReport: StatusReport?

    public convenience init(context: PluginContext, sender: Sender? = nil, status: StatusReport? = nil) throws {
        let options = try PluginOptions(plugin: Self.pluginID, context: context, allowed: Self.optionKeys)
        var me = ReaderSettings.defaultMe
        if let value = context.options["me"] {
            guard let names = value.arrayValue?.compactMap(\.stringValue), names.count == value.arrayValue?.count,
                !names.isEmpty
            else {
                throw PluginError.invalidOption(
                    plugin: Self.pluginID, configFile: context.configFile?.path, key: "me",
                    problem: "expected a non-empty array of sender names, found \(value)")
            }
            me = names
        }
        let folder = try options.string("store").map { URL(fileURLWithPath: $0) } ?? context.dataDirectory
        self.init(store: RecordStore(directory: folder), me: me, now: context.now, sender: sender, status: status)
    }

    public init(
        store: RecordStore, me: [String] = ReaderSettings.defaultMe, now: @escaping @Sendable () -> Date,
        sender: Sender? = nil, status: StatusReport? = nil
    ) {
        self.sender = sender
        self.statusReport = status
        self.store = store
        self.me = me
        self.now = now
    }

    public var capabilities: [String] { capabilities(in: .arabic) }

    public func capabilities(in language: ChatLanguage) -> [String] {
        [
            language == .arabic
                ? "تحليل رسائلك على جهازك إلى سجل ائتماني موقّع لا يغادره نص أي رسالة"
                : "analysing your messages on your device into a signed credit record that no message text leaves"
        ]
    }

    public var tools: [any Tool] { [analyzeTool, verifyTool, historyTool] }

    var analyzeTool: PluginTool {
        PluginTool(
            name: "credit_analyze",
            description:
                "Analyses the person's message file on the device (line format, chat export or JSON) into Big Five traits, a trustworthiness score and explanations, and saves a record signed with the device key. Returns the record, never message text.",
            arguments: [
                ToolArgument("file", required: true),
                ToolArgument(
                    "scope",
                    schema: .object([
                        "type": .string("string"), "enum": .array([.string("all"), .string("loved-ones")]),
                    ])),
                // The person's consent, needed once before the first analysis (kept in the store after that).
                ToolArgument("consent", schema: .object(["type": .string("boolean")])),
            ]
        ) { [self] args in
            var settings = AnalysisSettings(reader: ReaderSettings(me: me))
            if let kept = Consent.load(store) {
                settings.consent = kept
            } else {
                guard args.values["consent"]?.boolValue == true else {
                    throw ToolError(
                        tool: "credit_analyze",
                        "the person's consent is needed before the first analysis: ask them, then call with "
                            + "\"consent\": true")
                }
                let consent = Consent(givenAt: now(), how: "tool")
                try consent.save(in: store)
                settings.consent = consent
            }
            if args.values["scope"] != nil {
                let text = try args.string("scope")
                guard let scope = AnalysisScope(rawValue: text) else {
                    throw ToolError(tool: "credit_analyze", "scope must be all or loved-ones, not '\(text)'")
                }
                settings.scope = scope
            }
            let path = try args.string("file")
            guard path != "-", FileManager.default.isReadableFile(atPath: path) else {
                throw ToolError(tool: "credit_analyze", "cannot read the message file '\(path)'")
            }
            let signed = try await CreditScoring.analyzeAndSign(
                path: path, settings: settings, model: nil, store: store, now: now())
            return .object([
                "record": try JSONValue.parse(Data(signed.bytes)), "file": .string(signed.file.path),
                "traitsNote": .string(CreditScoring.traitsCaveat),
                "digest": .string(signed.digest), "keyId": .string(signed.keyID),
            ])
        }
    }

    var verifyTool: PluginTool {
        PluginTool(
            name: "credit_verify",
            description: "Checks a signed credit record file offline (canonical bytes, fields, Ed25519 signature).",
            arguments: [ToolArgument("file", required: true)]
        ) { args in
            let path = try args.string("file")
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ToolError(tool: "credit_verify", "cannot read '\(path)'")
            }
            return try Self.verification(Array(data))
        }
    }

    /// A record's offline check (`verify`) as JSON: `valid` with its id, key and digest, or why not.
    static func verification(_ bytes: [UInt8]) throws -> JSONValue {
        do {
            let v = try RecordVerifier.verify(bytes, lib: try LibCrypto.shared())
            return .object([
                "valid": .bool(true), "recordId": .string(v.recordID), "keyId": .string(v.keyID),
                "digest": .string(v.digest), "trustworthiness": .number(Double(v.trustworthiness)),
            ])
        } catch let rejection as RecordRejection {
            return .object([
                "valid": .bool(false), "reason": .string(rejection.reason), "detail": .string(rejection.detail),
            ])
        }
    }

    /// The web app's analyses (the credit place's background jobs).
    let webJobs = CreditWebJobs()

    public var webPlace: (any WebPlace)? { CreditWebPlace(plugin: self, jobs: webJobs) }

    var historyTool: PluginTool {
        PluginTool(
            name: "credit_history",
            description:
                "Lists this device's signed credit records, each verified, with its score and whether the server "
                + "stored it; a record that fails verification is listed as invalid with the reason and no score."
        ) { [self] _ in .array(CreditScoring.history(store).map(\.json)) }
    }
}
