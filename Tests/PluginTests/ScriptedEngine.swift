import AbsherData
import Foundation
import SanadChat
import SanadCore

/// A deterministic stand-in for an engine, for the chat host's state machine only (streaming order, processing
/// state, failures): it streams the pieces it is given, whatever the prompt. What users see from a real model is
/// shown with `sanad chat` on SmolLM2 (Plugins/README.md).
// @unchecked Sendable: a test double whose state is behind its lock
final class ScriptedSession: InferenceSession, @unchecked Sendable {
    private let lock = NSLock()
    private var script: [[String]]
    private var failAfter: Int?
    private(set) var prompts: [String] = []
    private(set) var resets = 0

    private let contextLength: Int
    private let pieceDelay: Double
    private(set) var cancelled = 0

    /// Each generation streams the next entry of `replies` (the last one repeats); `failAfter` makes every
    /// generation throw after that many pieces; `pieceDelay` seconds pass before each piece; a token is a byte.
    init(replies: [[String]], failAfter: Int? = nil, contextLength: Int = 4096, pieceDelay: Double = 0) {
        script = replies.isEmpty ? [[]] : replies
        self.failAfter = failAfter
        self.contextLength = contextLength
        self.pieceDelay = pieceDelay
    }

    var model: ModelDescription {
        ModelDescription(
            name: "scripted", architecture: "none", parameterCount: 0, fileSize: 0, contextLength: contextLength,
            trainingContextLength: contextLength, vocabularySize: 256, addsBOS: false, bosToken: nil)
    }

    func tokenize(_ text: String, addSpecial: Bool, parseSpecial: Bool) throws -> [Int32] {
        text.utf8.map { Int32($0) }
    }
    func detokenize(_ tokens: [Int32], renderSpecial: Bool) -> String {
        String(decoding: tokens.map { UInt8(truncatingIfNeeded: $0) }, as: UTF8.self)
    }
    func applyChatTemplate(_ messages: [ChatMessage], addAssistantPrompt: Bool) throws -> String {
        ChatTemplate.chatml.apply(messages, addAssistantPrompt: addAssistantPrompt)
    }

    func generate(_ input: GenerationInput, parameters: GenerationParameters) -> AsyncThrowingStream<
        GenerationEvent, Error
    > {
        let pieces: [String] = lock.withLock {
            if case .text(let t, _) = input { prompts.append(t) }
            return script.count > 1 ? script.removeFirst() : script[0]
        }
        let failAfter = self.failAfter
        if pieceDelay > 0 {
            let delay = UInt64(pieceDelay * 1e9)
            return AsyncThrowingStream { continuation in
                let task = Task {
                    for (i, p) in pieces.enumerated() {
                        try? await Task.sleep(nanoseconds: delay)
                        if Task.isCancelled {
                            lock.withLock { cancelled += 1 }
                            break
                        }
                        continuation.yield(.token(id: Int32(i), text: p))
                    }
                    continuation.finish()
                }
                continuation.onTermination = { _ in task.cancel() }
            }
        }
        return AsyncThrowingStream { continuation in
            for (i, p) in pieces.enumerated() {
                if let failAfter, i == failAfter {
                    continuation.finish(throwing: SanadError.engine("scripted failure after \(i) pieces"))
                    return
                }
                continuation.yield(.token(id: Int32(i), text: p))
            }
            if let failAfter, failAfter >= pieces.count {
                continuation.finish(throwing: SanadError.engine("scripted failure at the end"))
                return
            }
            continuation.yield(
                .finished(.endOfGeneration, GenerationStats(promptTokens: 1, generatedTokens: pieces.count)))
            continuation.finish()
        }
    }

    func evaluateLogits(_ tokens: [Int32], rows: Range<Int>?) throws -> [[Float]] {
        throw SanadError.engine("the scripted session has no logits")
    }

    func append(_ tokens: [Int32]) throws {}
    func reset() { lock.withLock { resets += 1 } }
}

/// Collects chat events for assertions.
final class EventLog: @unchecked Sendable {  // @unchecked: its events behind its lock
    private let lock = NSLock()
    private var stored: [ChatEvent] = []
    var events: [ChatEvent] { lock.withLock { stored } }
    var handler: ChatEventHandler { { [self] e in lock.withLock { stored.append(e) } } }
}

/// The session's observable state at one moment (so one `await` reads it all).
struct Snapshot {
    var messages: [ChatEntry]
    var suggestions: [ChatSuggestion]
    var isProcessing: Bool
    var isInputEnabled: Bool
    var canRetry: Bool
    var engineState: EngineState
    var presented: Destination?
}

extension ChatSession {
    func snapshot() -> Snapshot {
        Snapshot(
            messages: messages, suggestions: suggestions, isProcessing: isProcessing, isInputEnabled: isInputEnabled,
            canRetry: canRetry, engineState: engineState, presented: presented)
    }
}
