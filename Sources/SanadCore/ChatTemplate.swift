/// Chat template families. A model's `tokenizer.chat_template` (Jinja) is recognised by the markers it uses, as
/// llama.cpp's `llama_chat_apply_template` does, and applied without a Jinja engine. The output matches llama.cpp's
/// built-in templates so that every engine sees the same prompt.
public enum ChatTemplate: String, Sendable, CaseIterable, Equatable {
    /// `<|im_start|>role\ncontent<|im_end|>\n` (SmolLM2, Qwen, …).
    case chatml
    /// `<start_of_turn>user\n…<end_of_turn>\n`, the system text folded into the first user turn (Gemma 1–3).
    case gemma
    /// `<|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|>` (Llama 3).
    case llama3

    /// The family of a Jinja template, or nil when no known marker is present.
    public static func detect(_ jinja: String) -> ChatTemplate? {
        if jinja.contains("<|im_start|>") { return .chatml }
        if jinja.contains("<start_of_turn>") { return .gemma }
        if jinja.contains("<|start_header_id|>") { return .llama3 }
        return nil
    }

    /// The family of `jinja`, or an error naming the template and the known families.
    public static func resolve(jinja: String?, override: String? = nil) throws -> ChatTemplate {
        if let override {
            guard let t = ChatTemplate(rawValue: override) else {
                throw SanadError.unknownChatTemplate(excerpt: override, known: allCases.map(\.rawValue))
            }
            return t
        }
        guard let jinja, let t = detect(jinja) else {
            throw SanadError.unknownChatTemplate(
                excerpt: String((jinja ?? "(the model has no chat template)").prefix(80)),
                known: allCases.map(\.rawValue))
        }
        return t
    }

    /// Tokens that end an assistant turn in this family (generation should stop on them).
    public var endOfTurnMarkers: [String] {
        switch self {
        case .chatml: return ["<|im_end|>"]
        case .gemma: return ["<end_of_turn>"]
        case .llama3: return ["<|eot_id|>"]
        }
    }

    /// The prompt text for `messages`; `addAssistantPrompt` opens the assistant's turn.
    public func apply(_ messages: [ChatMessage], addAssistantPrompt: Bool) -> String {
        var out = ""
        switch self {
        case .chatml:
            for m in messages {
                out += "<|im_start|>\(m.role.rawValue)\n\(m.content)<|im_end|>\n"
            }
            if addAssistantPrompt { out += "<|im_start|>assistant\n" }
        case .gemma:
            // No system turn in Gemma: trimmed system text is prepended to the next non-model turn.
            var system = ""
            for m in messages {
                if m.role == .system {
                    system += m.content.trimmingSpaces()
                    continue
                }
                let role = m.role == .assistant ? "model" : m.role.rawValue
                out += "<start_of_turn>\(role)\n"
                if !system.isEmpty && role != "model" {
                    out += system + "\n\n"
                    system = ""
                }
                out += m.content.trimmingSpaces() + "<end_of_turn>\n"
            }
            if addAssistantPrompt { out += "<start_of_turn>model\n" }
        case .llama3:
            for m in messages {
                out +=
                    "<|start_header_id|>\(m.role.rawValue)<|end_header_id|>\n\n"
                    + "\(m.content.trimmingSpaces())<|eot_id|>"
            }
            if addAssistantPrompt { out += "<|start_header_id|>assistant<|end_header_id|>\n\n" }
        }
        return out
    }
}

extension String {
    /// Leading and trailing spaces and newlines removed (llama.cpp's `trim`).
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\n" || f == "\t" || f == "\r" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\n" || l == "\t" || l == "\r" { s = s.dropLast() }
        return String(s)
    }
}
