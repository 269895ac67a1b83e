import Foundation
import GGUF
import SanadCommandLine
import SanadCore
import SanadHost
import SanadReceipts
import SanadSigning
import SanadStructured

/// `sanad generate --receipt FILE [--receipt-include-text]`: the flags and what they make.
struct ReceiptFlags {
    var file: String?
    var includeText = false

    static let help = """
          --receipt FILE         write a signed receipt of this generation to FILE (README.md, "Receipts"): the
                                 model's and tokenizer's digests, the engine and its build, every parameter, the
                                 digests of the prompt and output tokens and text, timing, signed by the device key
          --receipt-include-text also write the prompt and output text and token ids (and a JSON schema) into the
                                 receipt, which 'sanad receipt verify --replay' needs; without it only their digests
        """

    static func parse(_ arguments: inout Arguments) throws -> ReceiptFlags {
        let flags = ReceiptFlags(
            file: try arguments.option("--receipt"), includeText: arguments.flag("--receipt-include-text"))
        if flags.includeText && flags.file == nil { throw UsageError("--receipt-include-text needs --receipt FILE") }
        return flags
    }

    /// A recorder for this generation when `--receipt` was given: the model and tokenizer are hashed now.
    func recorder(
        session: any InferenceSession, plan: ModelPlan, prompt: String, parameters: GenerationParameters,
        chatTemplate: String?
    ) throws -> ReceiptRecorder? {
        guard let file else { return nil }
        return try ReceiptRecorder(
            file: file, includeText: includeText, issuer: try receiptIssuer(plan),
            record: try GenerationRecord(
                prompt: prompt, session: session, parameters: parameters, chatTemplate: chatTemplate))
    }
}

/// The receipt issuer for `plan`'s model (hashed now) and engine, with the device key.
func receiptIssuer(_ plan: ModelPlan) throws -> ReceiptIssuer {
    let lib = try LibCrypto.shared()
    return try ReceiptIssuer(
        modelFile: plan.url, engine: Wiring.receiptEngine(plan), sanadVersion: sanadVersion,
        key: try deviceKey(lib), lib: lib)
}

/// The device key every signed document uses (credit records too): `SANAD_CREDIT_KEYS`, else the key folder under
/// the credit plugin's data folder, where it was first created; made on first use.
func deviceKey(_ lib: LibCrypto) throws -> DeviceKey {
    try DeviceKey.loadOrCreate(directory: try deviceKeyDirectory(), lib: lib)
}

/// The folder of the device key (and of `retired-keys.txt`).
func deviceKeyDirectory() throws -> URL {
    DeviceKey.directory(dataDirectory: try PluginHost.dataDirectory(for: DeviceKey.homeDataFolderID))
}

/// Writes a receipt file: its canonical bytes and one final newline.
func writeReceipt(_ bytes: [UInt8], to file: String) throws {
    do {
        try Data(bytes + [10]).write(to: URL(fileURLWithPath: file), options: .atomic)
    } catch {
        throw SigningError.io("cannot write the receipt \(file): \(error.localizedDescription)")
    }
}

/// Milliseconds since `start`.
func milliseconds(since start: DispatchTime) -> Double {
    Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e6
}

/// Collects what a receipt states while a generation runs (`recorded(by:)`), then signs and writes it.
final class ReceiptRecorder: @unchecked Sendable {  // events arrive one at a time; the lock guards `record`
    let file: String
    let includeText: Bool
    let issuer: ReceiptIssuer
    private var record: GenerationRecord
    private let lock = NSLock()

    init(file: String, includeText: Bool, issuer: ReceiptIssuer, record: GenerationRecord) {
        self.file = file
        self.includeText = includeText
        self.issuer = issuer
        self.record = record
    }

    func record(_ event: GenerationEvent) {
        lock.withLock { record.record(event) }
    }

    /// Signs and writes the receipt when the generation finished (not when it was interrupted); says so on standard
    /// error with the time signing took.
    func write() throws {
        let record = lock.withLock { self.record }
        guard record.finished else { return }
        let start = DispatchTime.now()
        let bytes = try issuer.sign(record, includeText: includeText)
        let signing = milliseconds(since: start)
        try writeReceipt(bytes, to: file)
        printError(
            "receipt: \(file), signed by device key \(issuer.key.keyID) (receipt \(String(format: "%.3f", signing)) "
                + "ms, hashing the model and tokenizer \(String(format: "%.0f", issuer.hashingSeconds * 1000)) ms)")
    }
}

extension AsyncThrowingStream where Element == GenerationEvent {
    /// The same events, each shown to `recorder` first (none when it is nil).
    func recorded(by recorder: ReceiptRecorder?) -> AsyncMapSequence<Self, GenerationEvent> {
        map { event in
            recorder?.record(event)
            return event
        }
    }
}

/// `sanad receipt verify`: check a generation receipt offline, and replay it on this machine.
enum ReceiptCommand: VerbCommand {
    static let name = "receipt"
    static let summary = "Verify a signed generation receipt and replay it bit for bit"
    static let help = """
        Usage: sanad receipt verify FILE [--replay] [--trusted FILE] [-m MODEL]

        Checks a receipt written by 'sanad generate --receipt FILE' or the chat's '/receipt FILE' (FILE '-' reads
        standard input): its bytes must be its RFC 8785 canonical form, its fields present, the text and token ids it
        includes must match its digests, and its Ed25519 signature must verify for the device key it names. FILE may
        also be a server response holding a "receipt" object, or a chat transcript saved with 'sanad chat
        --receipts' (each message's receipt is checked, in its canonical form, and a message's text must be the
        output its receipt states). Exit 0 valid, 1 invalid.

        Options:
          --trusted FILE         the signing key must be one of FILE's trusted keys (one per line, the first word:
                                 a public key or a key id; 'sanad keys export-public [--with-retired]' prints such
                                 lines); a receipt signed by any other key is refused (--trusted-keys is an alias)
          --replay               run the generation again on this machine with the pure-swift engine (bit-exact on
                                 every CPU and kernel build; SANAD_KERNELS picks the build): from the receipt's
                                 prompt token ids and parameters, with the model found in the models folder by its
                                 SHA-256; prints 'identical' or the first differing token (exit 2). Needs a receipt
                                 made with --receipt-include-text and a deterministic engine (pure-swift)
          -m, --model MODEL      the model file to replay with (a path or a name in the models folder) when the
                                 one the receipt names is not found by its digest
          -t, --threads N        compute threads for the replay
        \(HostContext.optionsHelp)
        """

    static var verbs: [any CommandVerb.Type] { [Verify.self] }

    struct Verify: CommandVerb {
        static let name = "verify"
        var path: String
        var replay: Bool
        var trustedKeys: String?
        var model: String?
        var threads: Int?
        var host: HostOptions

        init(parsing arguments: inout Arguments) throws {
            replay = arguments.flag("--replay")
            trustedKeys = try arguments.option("--trusted", "--trusted-keys")
            model = try arguments.option("-m", "--model")
            threads = try arguments.int("-t", "--threads", range: 1...1024)
            host = try HostOptions.parse(&arguments)
            path = try arguments.positionals(min: 1, max: 1, names: "FILE")[0]
            if model != nil && !replay { throw UsageError("--model needs --replay") }
        }

        func run() async throws -> Int32 {
            let lib = try LibCrypto.shared()
            let bytes: [UInt8]
            if path == "-" {
                bytes = Array(FileHandle.standardInput.readDataToEndOfFile())
            } else {
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw SigningError.io("cannot read the receipt \(path)")
                }
                bytes = Array(data)
            }
            let trusted = try trustedKeys.map { file -> Set<String> in
                try ReceiptVerifier.trustedKeys(try readText(file))
            }
            var verified: [VerifiedReceipt] = []
            switch ReceiptContainer.of(bytes) {
            case .file:
                guard
                    let receipt = check(
                        "receipt", trusted: trusted,
                        { try ReceiptVerifier.verify(bytes, lib: lib, trustedKeys: trusted) })
                else { return ExitCode.failure }
                verified = [receipt]
            case .embedded(let list):
                guard !list.isEmpty else {
                    printError("invalid: \(path) holds no receipt (a transcript saved without --receipts?)")
                    return ExitCode.failure
                }
                if replay && list.count > 1 {
                    throw UsageError("--replay takes one receipt; \(path) holds \(list.count)")
                }
                for item in list {
                    guard
                        let receipt = check(
                            item.label, trusted: trusted,
                            { try Self.verifyEmbedded(item, lib: lib, trustedKeys: trusted) })
                    else { return ExitCode.failure }
                    verified.append(receipt)
                }
            }
            guard replay, let receipt = verified.first else { return ExitCode.success }
            return try await Replay(receipt: receipt, lib: lib, verify: self).run()
        }

        /// Runs one verification and prints its verdict: `valid: …` and what it states, or `invalid: …`.
        func check(_ label: String, trusted: Set<String>?, _ verify: () throws -> VerifiedReceipt) -> VerifiedReceipt? {
            let receipt: VerifiedReceipt
            do {
                receipt = try verify()
            } catch let problem as SignatureProblem {
                printError("invalid: \(label) rejected (\(problem.reason)): \(problem.detail)")
                return nil
            } catch {
                printError("invalid: \(label) rejected: \(error)")
                return nil
            }
            print(
                "valid: \(label == "receipt" ? "" : label + ": ")receipt \(receipt.receiptID) signed by device key "
                    + "\(receipt.signer.keyID)" + (trusted != nil ? " (trusted)" : "") + "; digest \(receipt.digest)")
            print(
                "generation: \(receipt.modelFile) (SHA-256 \(receipt.modelSHA256)) on \(receipt.engineID) "
                    + "(\(receipt.engineBuild)), \(receipt.outputTokenCount) tokens")
            return receipt
        }

        /// A receipt held in a response or transcript; a transcript message must say what a receipt with text
        /// states as the output (surrounding whitespace aside: the chat trims it).
        static func verifyEmbedded(_ item: EmbeddedReceipt, lib: LibCrypto, trustedKeys: Set<String>?) throws
            -> VerifiedReceipt
        {
            let receipt = try ReceiptVerifier.verify(object: item.receipt, lib: lib, trustedKeys: trustedKeys)
            if let content = item.content, let output = receipt.document["output"]?["text"]?.stringValue,
                content != output.trimmingCharacters(in: .whitespacesAndNewlines)
            {
                throw SignatureProblem(
                    reason: "inconsistent", detail: "the message's text is not the output the receipt states",
                    keyID: receipt.signer.keyID)
            }
            return receipt
        }
    }

    /// Runs a verified receipt's generation again and compares the token ids.
    struct Replay {
        var receipt: VerifiedReceipt
        var lib: LibCrypto
        var verify: Verify

        func run() async throws -> Int32 {
            if let reason = receipt.notReplayable {
                printError(
                    "replay: cannot replay this receipt exactly: it was made by the \(receipt.engineID) engine "
                        + "(\(receipt.engineBuild)), which is not deterministic across machines: \(reason)")
                return ExitCode.failure
            }
            guard let prompt = receipt.promptTokens, let expected = receipt.outputTokens else {
                printError(
                    "replay: the receipt has no prompt and output token ids (it was made without "
                        + "--receipt-include-text); a replay needs them")
                return ExitCode.failure
            }
            let host = try HostContext.load(verify.host)
            let modelURL: URL
            if let model = verify.model {
                modelURL = try host.resolveModel(model)
                let digest = try SHA256Digest.hex(file: modelURL, lib: lib)
                if digest != receipt.modelSHA256 {
                    printError(
                        "note: \(modelURL.path) is not the receipt's model: its SHA-256 is \(digest), the receipt's "
                            + "\(receipt.modelSHA256)")
                }
            } else {
                let found = try ModelLookup.find(
                    sha256: receipt.modelSHA256, hint: receipt.modelFile, in: host.modelsDirectory, lib: lib)
                guard let file = found.file else {
                    printError(
                        "replay: model not found by digest: no file of \(host.modelsDirectory.path) (\(found.looked) "
                            + ".gguf files hashed) has SHA-256 \(receipt.modelSHA256) (\(receipt.modelFile)); "
                            + "pass -m MODEL to replay with another file")
                    return ExitCode.failure
                }
                modelURL = file
            }
            let p = try receipt.parameters()
            var constraint: (any TokenConstraint)?
            if let schema = receipt.schema {
                constraint = try SchemaConstraint(schema: schema)
            } else if let kind = receipt.constraintKind {
                printError(
                    "replay: the receipt's \(kind) constraint is not in it, or the pure-swift engine cannot apply it")
                return ExitCode.failure
            }
            let (session, plan) = try await host.openModel(
                ModelRequest(
                    model: modelURL.path, backend: "pure-swift", threads: verify.threads,
                    contextLength: receipt.contextLength, batchSize: receipt.batchSize, seed: p.sampling.seed,
                    checkMemory: false, allowLongContext: true))
            let parameters = GenerationParameters(
                maxTokens: p.maxTokens, sampling: p.sampling, stopStrings: p.stops, truncatePrompt: p.truncate,
                constraint: constraint)
            var got: [Int32] = []
            for try await event in session.generate(.tokens(prompt), parameters: parameters) {
                if case .token(let id, _) = event { got.append(id) }
            }
            let build = Wiring.receiptEngine(plan).build
            func token(_ id: Int32?) -> String {
                guard let id else { return "(ended)" }
                return "\(id) \(JSONValue.string(session.detokenize([id], renderSpecial: true)).jsonString)"
            }
            switch ReplayOutcome.compare(expected: expected, got: got) {
            case .identical(let count):
                print("replay: identical: \(count) tokens, the same ids as the receipt (pure-swift, \(build))")
                return ExitCode.success
            case .differs(let index, let e, let g):
                print(
                    "replay: differs at token \(index): expected \(token(e)), got \(token(g)) (pure-swift, \(build))")
                return 2
            }
        }
    }
}

/// `sanad keys`: the device key that signs receipts and credit records.
enum KeysCommand: VerbCommand {
    static let name = "keys"
    static let summary = "Show, export or rotate the device's signing key"
    static let help = """
        Usage: sanad keys show [--json]
               sanad keys export-public [--with-retired]
               sanad keys rotate

        The device's Ed25519 key signs generation receipts and credit records (one key; created on first use,
        owner-only, in SANAD_CREDIT_KEYS, else the credit plugin's data folder under keys/). Every signed document
        names its key: device.keyId (the first 16 hex digits of the public key's SHA-256) and device.publicKey.

          show            the key id, the public key, the key file and the retired keys
          export-public   one line for a verifier's trusted keys file: PUBLICKEY KEYID
          rotate          make a new device key: the old public key is kept in retired-keys.txt beside the key
                          (so what it signed still verifies against a trusted list holding it), the old private key
                          is deleted; receipts and credit records are signed with the new key from then on, which
                          verifiers must add to their trusted keys and a credit receiver's operator must enroll
                          ('sanad credit receiver enroll PUBLIC-KEY', with the receiver's credentials)

        Options:
          --json          show as a JSON object
          --with-retired  export-public also prints the retired keys' lines (PUBLICKEY KEYID retired TIME), for
                          verifiers that must still accept what they signed
        """

    static var verbs: [any CommandVerb.Type] { [Show.self, ExportPublic.self, Rotate.self] }

    struct Show: CommandVerb {
        static let name = "show"
        var json: Bool
        init(parsing arguments: inout Arguments) throws {
            json = arguments.flag("--json")
            try arguments.finish()
        }
        func run() async throws -> Int32 {
            let key = try deviceKey(try LibCrypto.shared())
            let retired = DeviceKey.retiredKeys(directory: try deviceKeyDirectory())
            if json {
                print(
                    JSONValue.object([
                        "keyId": .string(key.keyID), "publicKey": .string(Hex.encode(key.publicKey)),
                        "algorithm": .string("Ed25519"), "file": .string(key.file.path),
                        "retired": .array(retired.map(JSONValue.string)),
                    ]).prettyString)
                return ExitCode.success
            }
            print("key id:     \(key.keyID)")
            print("public key: \(Hex.encode(key.publicKey))")
            print("algorithm:  Ed25519")
            print("file:       \(key.file.path)")
            for line in retired { print("retired:    \(line)") }
            return ExitCode.success
        }
    }

    struct ExportPublic: CommandVerb {
        static let name = "export-public"
        var withRetired: Bool
        init(parsing arguments: inout Arguments) throws {
            withRetired = arguments.flag("--with-retired")
            try arguments.finish()
        }
        func run() async throws -> Int32 {
            let key = try deviceKey(try LibCrypto.shared())
            print("\(Hex.encode(key.publicKey)) \(key.keyID)")
            if withRetired { for line in DeviceKey.retiredKeys(directory: try deviceKeyDirectory()) { print(line) } }
            return ExitCode.success
        }
    }

    struct Rotate: CommandVerb {
        static let name = "rotate"
        init(parsing arguments: inout Arguments) throws { try arguments.finish() }
        func run() async throws -> Int32 {
            let directory = try deviceKeyDirectory()
            let (retired, current) = try DeviceKey.rotate(
                directory: directory, retiredAt: GenerationReceipt.isoTime(Date()), lib: try LibCrypto.shared())
            print(
                "retired key: \(retired.keyID) (public key \(Hex.encode(retired.publicKey))), its private key deleted, "
                    + "its public key kept in \(directory.appendingPathComponent(DeviceKey.retiredFileName).path)")
            print("new key:     \(current.keyID) (public key \(Hex.encode(current.publicKey)))")
            print(
                "Receipts and credit records are signed with \(current.keyID) from now on: give verifiers its line "
                    + "('sanad keys export-public') and have a credit receiver's operator enroll it ('sanad credit "
                    + "receiver enroll PUBLIC-KEY'); what \(retired.keyID) signed still verifies against a list holding its line "
                    + "('sanad keys export-public --with-retired').")
            return ExitCode.success
        }
    }
}
