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
        chatTemplate: String?, constraint: ReceiptConstraint?
    ) throws -> ReceiptRecorder? {
        guard let file else { return nil }
        return try ReceiptRecorder(
            file: file, includeText: includeText, session: session, plan: plan, prompt: prompt, parameters: parameters,
            chatTemplate: chatTemplate, constraint: constraint)
    }
}

/// Collects what a receipt states while a generation runs (`recorded(by:)`), then signs and writes it.
final class ReceiptRecorder: @unchecked Sendable {  // events arrive one at a time; the lock guards `facts`
    let file: String
    let lib: LibCrypto
    let key: DeviceKey
    /// The random end of the receipt's id, drawn before the generation.
    let nonce: [UInt8]
    /// Seconds spent hashing the model file and its tokenizer before the generation.
    let hashingSeconds: Double
    private var facts: GenerationFacts
    private var finished = false
    private let lock = NSLock()

    init(
        file: String, includeText: Bool, session: any InferenceSession, plan: ModelPlan, prompt: String,
        parameters: GenerationParameters, chatTemplate: String?, constraint: ReceiptConstraint?
    ) throws {
        let start = Date()
        self.file = file
        lib = try LibCrypto.shared()
        key = try ReceiptRecorder.deviceKey(lib)
        nonce = try GenerationReceipt.newNonce(lib: lib)
        let gguf = try GGUFFile(path: plan.url.path)
        let size = (try? FileManager.default.attributesOfItem(atPath: plan.url.path)[.size] as? Int) ?? 0
        let model = ReceiptModel(
            file: plan.url.lastPathComponent, sha256: try SHA256Digest.hex(file: plan.url, lib: lib), bytes: size,
            architecture: gguf.architecture, tokenizerSHA256: try TokenizerDigest.sha256(gguf, lib: lib),
            chatTemplateSHA256: try TokenizerDigest.chatTemplateSHA256(gguf, lib: lib))
        hashingSeconds = Date().timeIntervalSince(start)
        // The prompt as the generation loop tokenizes it in a fresh session (BOS as the model adds it, special
        // tokens parsed); a replay starts from these ids.
        let promptTokens = try session.tokenize(prompt, addSpecial: true, parseSpecial: true)
        facts = GenerationFacts(
            sanadVersion: sanadVersion, model: model, engine: Wiring.receiptEngine(plan),
            maxTokens: parameters.maxTokens,
            sampling: parameters.sampling, stopStrings: parameters.stopStrings,
            truncatePrompt: parameters.truncatePrompt,
            chatTemplate: chatTemplate, constraint: constraint, promptText: prompt, promptTokens: promptTokens,
            outputTokens: [], outputText: "", stopReason: .cancelled, stats: GenerationStats(), createdAt: Date(),
            includeText: includeText)
    }

    /// The device key every signed document uses (credit records too): `SANAD_CREDIT_KEYS`, else the key folder
    /// under the credit plugin's data folder, where it was first created; made on first use.
    static func deviceKey(_ lib: LibCrypto) throws -> DeviceKey {
        let data = try PluginHost.dataDirectory(for: DeviceKey.homeDataFolderID)
        return try DeviceKey.loadOrCreate(directory: DeviceKey.directory(dataDirectory: data), lib: lib)
    }

    func record(_ event: GenerationEvent) {
        lock.lock()
        defer { lock.unlock() }
        switch event {
        case .token(let id, let text):
            facts.outputTokens.append(id)
            facts.outputText += text
        case .finished(let reason, let stats):
            facts.stopReason = reason
            facts.stats = stats
            finished = reason != .cancelled
        }
    }

    /// Signs and writes the receipt when the generation finished (not when it was interrupted); says so on standard
    /// error with the time signing took.
    func write() throws {
        lock.lock()
        defer { lock.unlock() }
        guard finished else { return }
        facts.createdAt = Date()
        let start = DispatchTime.now()
        let bytes = try GenerationReceipt.sign(facts, nonce: nonce, key: key, lib: lib)
        let signing = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e6
        do {
            try Data(bytes + [10]).write(to: URL(fileURLWithPath: file), options: .atomic)
        } catch {
            throw SigningError.io("cannot write the receipt \(file): \(error.localizedDescription)")
        }
        printError(
            "receipt: \(file), signed by device key \(key.keyID) (receipt \(String(format: "%.3f", signing)) ms, "
                + "hashing the model and tokenizer \(String(format: "%.0f", hashingSeconds * 1000)) ms)")
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
        Usage: sanad receipt verify FILE [--replay] [--trusted-keys FILE] [-m MODEL]

        Checks a receipt written by 'sanad generate --receipt FILE' (FILE '-' reads standard input): its bytes must
        be its RFC 8785 canonical form, its fields present, the text and token ids it includes must match its
        digests, and its Ed25519 signature must verify for the device key it names. Exit 0 valid, 1 invalid.

        Options:
          --trusted-keys FILE    the signing key must be one of the public keys in FILE (one per line, the first
                                 word; 'sanad keys export-public' prints such a line)
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
            trustedKeys = try arguments.option("--trusted-keys")
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
            let receipt: VerifiedReceipt
            do {
                receipt = try ReceiptVerifier.verify(bytes, lib: lib, trustedKeys: trusted)
            } catch let problem as SignatureProblem {
                printError("invalid: receipt rejected (\(problem.reason)): \(problem.detail)")
                return ExitCode.failure
            }
            print(
                "valid: receipt \(receipt.receiptID) signed by device key \(receipt.signer.keyID)"
                    + (trusted != nil ? " (trusted)" : "") + "; digest \(receipt.digest)")
            print(
                "generation: \(receipt.modelFile) (SHA-256 \(receipt.modelSHA256)) on \(receipt.engineID) "
                    + "(\(receipt.engineBuild)), \(receipt.outputTokenCount) tokens")
            guard replay else { return ExitCode.success }
            return try await Replay(receipt: receipt, lib: lib, verify: self).run()
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
    static let summary = "Show or export the device's public signing key"
    static let help = """
        Usage: sanad keys show [--json]
               sanad keys export-public

        The device's Ed25519 key signs generation receipts and credit records (one key; created on first use,
        owner-only, in SANAD_CREDIT_KEYS, else the credit plugin's data folder under keys/).

          show            the key id, the public key and the key file
          export-public   one line for a verifier's trusted keys file: PUBLICKEY KEYID

        Options:
          --json          show as a JSON object
        """

    static var verbs: [any CommandVerb.Type] { [Show.self, ExportPublic.self] }

    struct Show: CommandVerb {
        static let name = "show"
        var json: Bool
        init(parsing arguments: inout Arguments) throws {
            json = arguments.flag("--json")
            try arguments.finish()
        }
        func run() async throws -> Int32 {
            let key = try ReceiptRecorder.deviceKey(try LibCrypto.shared())
            if json {
                print(
                    JSONValue.object([
                        "keyId": .string(key.keyID), "publicKey": .string(Hex.encode(key.publicKey)),
                        "algorithm": .string("Ed25519"), "file": .string(key.file.path),
                    ]).prettyString)
                return ExitCode.success
            }
            print("key id:     \(key.keyID)")
            print("public key: \(Hex.encode(key.publicKey))")
            print("algorithm:  Ed25519")
            print("file:       \(key.file.path)")
            return ExitCode.success
        }
    }

    struct ExportPublic: CommandVerb {
        static let name = "export-public"
        init(parsing arguments: inout Arguments) throws { try arguments.finish() }
        func run() async throws -> Int32 {
            let key = try ReceiptRecorder.deviceKey(try LibCrypto.shared())
            print("\(Hex.encode(key.publicKey)) \(key.keyID)")
            return ExitCode.success
        }
    }
}
