import Foundation
import SanadCore

/// An engine session that passes everything through to `inner` and keeps the `GenerationRecord` of its latest
/// generation: how a chat, which calls the engine itself, can sign a receipt of the answer it just gave.
public final class RecordingSession: InferenceSession, @unchecked Sendable {  // `latest` and `count` behind `lock`
    public let inner: any InferenceSession
    /// What a receipt names as the chat template (`model` or a family's name).
    public let chatTemplate: String?
    private let lock = NSLock()
    private var latest: GenerationRecord?
    private var count = 0

    public init(_ inner: any InferenceSession, chatTemplate: String?) {
        self.inner = inner
        self.chatTemplate = chatTemplate
    }

    /// The latest generation's record (finished or not), and how many generations started so far.
    public var latestGeneration: (record: GenerationRecord?, number: Int) { lock.withLock { (latest, count) } }

    public var model: ModelDescription { inner.model }

    public func tokenize(_ text: String, addSpecial: Bool, parseSpecial: Bool) throws -> [Int32] {
        try inner.tokenize(text, addSpecial: addSpecial, parseSpecial: parseSpecial)
    }

    public func detokenize(_ tokens: [Int32], renderSpecial: Bool) -> String {
        inner.detokenize(tokens, renderSpecial: renderSpecial)
    }

    public func applyChatTemplate(_ messages: [ChatMessage], addAssistantPrompt: Bool) throws -> String {
        try inner.applyChatTemplate(messages, addAssistantPrompt: addAssistantPrompt)
    }

    public func evaluateLogits(_ tokens: [Int32], rows: Range<Int>?) throws -> [[Float]] {
        try inner.evaluateLogits(tokens, rows: rows)
    }

    public func append(_ tokens: [Int32]) throws { try inner.append(tokens) }

    public func reset() { inner.reset() }

    /// The inner generation's events, each recorded before it is passed on; dropping or cancelling the returned
    /// stream cancels the inner one. A prompt given as token ids is recorded as their text.
    public func generate(_ input: GenerationInput, parameters: GenerationParameters) -> AsyncThrowingStream<
        GenerationEvent, Error
    > {
        let record: GenerationRecord?
        switch input {
        case .text(let text, _):
            record = try? GenerationRecord(
                prompt: text, session: inner, parameters: parameters, chatTemplate: chatTemplate)
        case .tokens(let ids):
            record = GenerationRecord(
                prompt: inner.detokenize(ids, renderSpecial: true), promptTokens: ids, parameters: parameters,
                chatTemplate: chatTemplate)
        }
        let number = lock.withLock {
            count += 1
            latest = record
            return count
        }
        let events = inner.generate(input, parameters: parameters)
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for try await event in events {
                        self.lock.withLock { if self.count == number { self.latest?.record(event) } }
                        continuation.yield(event)
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
