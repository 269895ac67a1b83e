import SanadChat
import SanadCore
import ServicesPlugin

/// The embeddings method: the service whose texts (names, keywords, description, in both languages) are nearest to
/// the question by cosine similarity of the sentence embeddings; none when the nearest is below `threshold`. Facets
/// and subject come from the keyword router.
final class EmbeddingRouter: Sendable {
    let keywords: ServiceRouter
    let model: any EmbeddingModel
    /// One vector per text of each service.
    let vectors: [(service: ServiceInfo, vector: [Float])]
    /// Below this similarity no service is meant.
    let threshold: Float

    init(_ keywords: ServiceRouter, model: any EmbeddingModel, threshold: Float = 0.45) async throws {
        var texts: [(ServiceInfo, String)] = []
        for s in keywords.catalog.services {
            let words = s.keywords.map { $0.replacingOccurrences(of: "*", with: "") }
            texts += [s.name, s.english.name, s.description, s.english.description].map { (s, $0) }
            texts.append((s, words.joined(separator: " ")))
        }
        let embedded = try await model.embed(texts.map(\.1))
        self.keywords = keywords
        self.model = model
        self.vectors = zip(texts, embedded).map { ($0.0, $1) }
        self.threshold = threshold
    }

    func route(_ q: TypedQuestion) async throws -> ServiceRoute? {
        let v = try await model.embed([q.text])[0]
        var best: (service: ServiceInfo, similarity: Float)?
        for (service, w) in vectors {
            let similarity = zip(v, w).reduce(Float(0)) { $0 + $1.0 * $1.1 }
            if similarity > (best?.similarity ?? -1) { best = (service, similarity) }
        }
        guard let best, best.similarity >= threshold else { return nil }
        return keywords.route(q, to: best.service, base: 2 + Double(best.similarity))
    }
}
