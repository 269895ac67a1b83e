import Foundation
import GGUF
import Synchronization

/// The special-token texts a Jinja chat template sees as `bos_token` and `eos_token` (from the model's vocabulary).
public struct ChatSpecialTokens: Sendable, Equatable {
    public var bos: String
    public var eos: String
    /// Whether tokenizing the prompt adds BOS (EOS): a rendered prompt's leading BOS text (trailing EOS text) is then
    /// removed, as llama.cpp does, so the prompt does not hold the token twice.
    public var addsBOS: Bool
    public var addsEOS: Bool

    public init(bos: String = "", eos: String = "", addsBOS: Bool = false, addsEOS: Bool = false) {
        self.bos = bos
        self.eos = eos
        self.addsBOS = addsBOS
        self.addsEOS = addsEOS
    }
}

/// A chat template to apply to messages: Jinja text (the model's `tokenizer.chat_template` or a `.jinja` file) run by
/// the interpreter, or one of the built-in families (`chatml`, `gemma`, `llama3`).
public struct ChatPromptTemplate: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable {
        case family(ChatTemplate)
        /// The parsed template, its text, and where it came from (for notes and errors).
        case jinja(JinjaTemplate, source: String, origin: String)
    }

    public let kind: Kind

    public init(family: ChatTemplate) {
        kind = .family(family)
    }

    /// Parses `source`; throws `JinjaError.syntax` when it is not a template jinja2 would compile.
    public init(jinja source: String, origin: String) throws {
        kind = .jinja(try JinjaTemplate(source), source: source, origin: origin)
    }

    public static let chatml = ChatPromptTemplate(family: .chatml)
    public static let gemma = ChatPromptTemplate(family: .gemma)
    public static let llama3 = ChatPromptTemplate(family: .llama3)

    /// `--chat-template NAME|FILE`: a built-in family name, or the path of a Jinja file.
    public static func named(_ nameOrPath: String) throws -> ChatPromptTemplate {
        if let family = ChatTemplate(rawValue: nameOrPath) { return ChatPromptTemplate(family: family) }
        guard FileManager.default.fileExists(atPath: nameOrPath) else {
            throw SanadError.unknownChatTemplate(
                excerpt: nameOrPath, known: ChatTemplate.allCases.map(\.rawValue) + ["a .jinja file"])
        }
        let text: String
        do {
            text = try String(contentsOfFile: nameOrPath, encoding: .utf8)
        } catch {
            throw SanadError.engine("cannot read the chat template file \(nameOrPath): \(error.localizedDescription)")
        }
        do {
            return try ChatPromptTemplate(jinja: text, origin: nameOrPath)
        } catch {
            throw SanadError.engine("\(nameOrPath): \(error)")
        }
    }

    /// The llama engine's `template` option: a family name, a .jinja file, or Jinja text.
    public static func option(_ text: String) throws -> ChatPromptTemplate {
        if ChatTemplate(rawValue: text) != nil || FileManager.default.fileExists(atPath: text) {
            return try named(text)
        }
        guard text.contains("{%") || text.contains("{{") else {
            throw SanadError.unknownChatTemplate(
                excerpt: text, known: ChatTemplate.allCases.map(\.rawValue) + ["a .jinja file", "Jinja text"])
        }
        return try ChatPromptTemplate(jinja: text, origin: "the engine's template option")
    }

    public var description: String {
        switch kind {
        case .family(let f): return "the built-in \(f.rawValue) family"
        case .jinja(_, _, let origin): return origin
        }
    }

    /// The prompt text for `messages`: a Jinja template gets `messages`, `add_generation_prompt`, `bos_token` and
    /// `eos_token`, as transformers' `apply_chat_template` passes them (and loses a BOS the tokenizer adds again).
    public func apply(
        _ messages: [ChatMessage], addAssistantPrompt: Bool, specialTokens: ChatSpecialTokens = ChatSpecialTokens()
    ) throws -> String {
        switch kind {
        case .family(let f):
            return f.apply(messages, addAssistantPrompt: addAssistantPrompt)
        case .jinja(let template, _, _):
            let list = messages.map { m in
                JinjaValue.object(JinjaObject([("role", .string(m.role.rawValue)), ("content", .string(m.content))]))
            }
            var text = try template.render([
                "messages": .array(list),
                "add_generation_prompt": .bool(addAssistantPrompt),
                "bos_token": .string(specialTokens.bos),
                "eos_token": .string(specialTokens.eos),
            ])
            if specialTokens.addsBOS, !specialTokens.bos.isEmpty, text.hasPrefix(specialTokens.bos) {
                text.removeFirst(specialTokens.bos.count)
            }
            if specialTokens.addsEOS, !specialTokens.eos.isEmpty, text.hasSuffix(specialTokens.eos) {
                text.removeLast(specialTokens.eos.count)
            }
            return text
        }
    }

    public static func == (a: ChatPromptTemplate, b: ChatPromptTemplate) -> Bool {
        switch (a.kind, b.kind) {
        case (.family(let x), .family(let y)): return x == y
        case (.jinja(_, let x, let ox), .jinja(_, let y, let oy)): return x == y && ox == oy
        default: return false
        }
    }
}

/// The chat template a session applies: the model's own `tokenizer.chat_template` run by the Jinja interpreter (what
/// llama.cpp's `--jinja` and transformers apply). A model without one, or whose template does not parse or fails
/// on the messages, gets the built-in family its markers (or its architecture) name, with a note on stderr saying
/// why; an override (`--chat-template`, the llama engine's `template` option) replaces all of this.
public struct ModelChatTemplate: Sendable {
    public let specialTokens: ChatSpecialTokens
    /// The model's Jinja template, or the override.
    public let primary: ChatPromptTemplate?
    /// The family used when `primary` is nil or fails.
    public let fallback: ChatTemplate?
    /// Why there is no primary template (for the note), or nil.
    let missing: String?

    /// `jinja` is the model's `tokenizer.chat_template`, `architecture` its `general.architecture`.
    public init(
        jinja: String?, architecture: String?, specialTokens: ChatSpecialTokens, override: ChatPromptTemplate? = nil
    ) {
        self.specialTokens = specialTokens
        let family = jinja.flatMap(ChatTemplate.detect) ?? architecture.flatMap(ChatTemplate.forArchitecture)
        if let override {
            primary = override
            fallback = nil
            missing = nil
            return
        }
        fallback = family
        guard let jinja else {
            primary = nil
            missing = "the model has no chat template"
            return
        }
        do {
            primary = try ChatPromptTemplate(jinja: jinja, origin: "the model's chat template")
            missing = nil
        } catch {
            primary = nil
            missing = "the model's chat template does not parse (\(error))"
        }
    }

    public func apply(_ messages: [ChatMessage], addAssistantPrompt: Bool) throws -> String {
        if let primary {
            do {
                return try primary.apply(messages, addAssistantPrompt: addAssistantPrompt, specialTokens: specialTokens)
            } catch let error as JinjaError {
                guard let fallback else { throw SanadError.engine("\(primary.description) failed: \(error)") }
                noteOnce(
                    "note: \(primary.description) failed on these messages (\(error)); using the built-in "
                        + "\(fallback.rawValue) family")
                return fallback.apply(messages, addAssistantPrompt: addAssistantPrompt)
            }
        }
        guard let fallback else {
            throw SanadError.unknownChatTemplate(
                excerpt: missing ?? "(the model has no chat template)", known: ChatTemplate.allCases.map(\.rawValue))
        }
        noteOnce("note: \(missing ?? "no chat template"); using the built-in \(fallback.rawValue) family")
        return fallback.apply(messages, addAssistantPrompt: addAssistantPrompt)
    }
}

extension ModelChatTemplate {
    /// The template of the GGUF `file` (its `tokenizer.chat_template` and `general.architecture`), with the texts of
    /// the BOS and EOS tokens as `text` (the session's tokenizer) gives them.
    public init(
        file: GGUFFile, bos: Int32?, eos: Int32?, addsBOS: Bool, addsEOS: Bool, text: (Int32) -> String
    ) {
        self.init(
            jinja: file.string("tokenizer.chat_template"), architecture: file.architecture,
            specialTokens: ChatSpecialTokens(
                bos: bos.map(text) ?? "", eos: eos.map(text) ?? "", addsBOS: addsBOS, addsEOS: addsEOS))
    }
}

extension ChatTemplate {
    /// The family of a model architecture without a chat template (`gemma3` → gemma), or nil.
    public static func forArchitecture(_ architecture: String) -> ChatTemplate? {
        if architecture.hasPrefix("gemma") { return .gemma }
        if architecture == "llama3" { return .llama3 }
        return nil
    }
}

private let notesPrinted = Mutex<Set<String>>([])

/// Writes `note` to standard error once per process.
func noteOnce(_ note: String) {
    let isNew = notesPrinted.withLock { $0.insert(note).inserted }
    if isNew { FileHandle.standardError.write(Data((note + "\n").utf8)) }
}
