import Foundation
import SanadCore

/// An engine session for a web chat conversation that owns no model: for each turn the server lends it a slot
/// (`lend`), and between turns it answers only what needs no generation (the model's description, tokenizing and
/// the chat template, through the `reference` session). So many conversations share the fixed slots.
public final class BorrowedSession: InferenceSession, @unchecked Sendable {  // `lent` is guarded by `lock`
    private let reference: any InferenceSession
    private let lock = NSLock()
    private var lent: (any InferenceSession)?

    public init(reference: any InferenceSession) { self.reference = reference }

    /// Lends `session` for a turn (nil gives it back).
    public func lend(_ session: (any InferenceSession)?) { lock.withLock { lent = session } }

    private var current: any InferenceSession { lock.withLock { lent } ?? reference }

    public var model: ModelDescription { reference.model }

    public func tokenize(_ text: String, addSpecial: Bool, parseSpecial: Bool) throws -> [Int32] {
        try current.tokenize(text, addSpecial: addSpecial, parseSpecial: parseSpecial)
    }

    public func detokenize(_ tokens: [Int32], renderSpecial: Bool) -> String {
        current.detokenize(tokens, renderSpecial: renderSpecial)
    }

    public func applyChatTemplate(_ messages: [ChatMessage], addAssistantPrompt: Bool) throws -> String {
        try current.applyChatTemplate(messages, addAssistantPrompt: addAssistantPrompt)
    }

    public func generate(_ input: GenerationInput, parameters: GenerationParameters) -> AsyncThrowingStream<
        GenerationEvent, Error
    > {
        guard let session = lock.withLock({ lent }) else {
            return AsyncThrowingStream { $0.finish(throwing: SanadError.engine("no generation slot is lent")) }
        }
        return session.generate(input, parameters: parameters)
    }

    public func evaluateLogits(_ tokens: [Int32], rows: Range<Int>?) throws -> [[Float]] {
        guard let session = lock.withLock({ lent }) else { throw SanadError.engine("no generation slot is lent") }
        return try session.evaluateLogits(tokens, rows: rows)
    }

    public func append(_ tokens: [Int32]) throws {
        guard let session = lock.withLock({ lent }) else { throw SanadError.engine("no generation slot is lent") }
        try session.append(tokens)
    }

    public func reset() { lock.withLock { lent }?.reset() }
}
