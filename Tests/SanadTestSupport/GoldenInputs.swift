import Foundation

/// The inputs the fidelity tests and scripts/make-golden share: scripts/golden/prompts.json (greedy prompts) and
/// scripts/golden/corpus.json (tokenizer texts). Inputs only; what llama.cpp made of them is in Tests/Fixtures or
/// comes from running its tools live (`LlamaTools`).
public enum GoldenInputs {
    /// One named prompt or text.
    public struct Case: Decodable, Sendable, CustomStringConvertible {
        public let name: String
        public let text: String
        public var description: String { name }

        enum CodingKeys: String, CodingKey { case name, text, prompt }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            name = try c.decode(String.self, forKey: .name)
            text = try c.decodeIfPresent(String.self, forKey: .text) ?? c.decode(String.self, forKey: .prompt)
        }
    }

    private struct Prompts: Decodable {
        let common: [Case]
        let chat: [String: [Case]]
    }

    private struct Corpus: Decodable { let cases: [Case] }

    /// The greedy prompts for a model key of prompts.json ("smollm2", "gemma3"): the common ones, then its chat ones.
    /// Empty when the file is missing or unreadable (a test checks that it is not).
    public static func prompts(_ model: String) -> [Case] {
        guard let prompts: Prompts = decode("prompts.json") else { return [] }
        return prompts.common + (prompts.chat[model] ?? [])
    }

    /// The tokenizer texts of corpus.json; empty when the file is missing or unreadable.
    public static var corpus: [Case] { (decode("corpus.json") as Corpus?)?.cases ?? [] }

    private static func decode<T: Decodable>(_ name: String) -> T? {
        let url = TestPaths.packageRoot.appendingPathComponent("scripts/golden").appendingPathComponent(name)
        guard let data = try? Data(contentsOf: url) else { return nil }
        return try? JSONDecoder().decode(T.self, from: data)
    }
}
