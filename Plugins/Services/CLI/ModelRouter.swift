import SanadChat
import SanadCore
import SanadStructured
import ServicesPlugin

/// The model method: the chat model names the service and the facets, constrained by a JSON schema over their ids
/// (`{"service": id | "none", "facets": [facet, …]}`); the subject comes from the keyword router.
final class ModelRouter: Sendable {
    let keywords: ServiceRouter
    let session: any InferenceSession
    let schema: JSONValue
    let instructions: String

    init(_ keywords: ServiceRouter, session: any InferenceSession) {
        self.keywords = keywords
        self.session = session
        let ids = keywords.catalog.services.map(\.id)
        schema = .object([
            "type": .string("object"),
            "properties": .object([
                "service": .object(["enum": .array((ids + ["none"]).map(JSONValue.string))]),
                "facets": .object([
                    "type": .string("array"), "maxItems": .number(3),
                    "items": .object(["enum": .array(ServiceFacet.allCases.map { .string($0.rawValue) })]),
                ]),
            ]),
            "required": .array([.string("service"), .string("facets")]),
            "additionalProperties": .bool(false),
        ])
        let services = keywords.catalog.services.map { "- \($0.id): \($0.english.name) / \($0.name)" }
        instructions = """
            Classify the user's question about government e-services. Answer with JSON only: the service it is \
            about ("none" when no service below covers it) and what it asks about it (the facets: fee, late_fine, \
            requirements, steps, eligibility, expiry, where; [] for a general question).
            Services:
            \(services.joined(separator: "\n"))
            """
    }

    func route(_ q: TypedQuestion) async throws -> ServiceRoute? {
        let value = try await StructuredGeneration.generate(
            session: session, messages: [.system(instructions), .user(q.text)], schema: schema,
            parameters: GenerationParameters(maxTokens: 96))
        guard let id = value["service"]?.stringValue,
            let service = keywords.catalog.services.first(where: { $0.id == id })
        else { return nil }
        var route = keywords.route(q, to: service, base: 3)
        route.facets = (value["facets"]?.arrayValue ?? []).compactMap {
            $0.stringValue.flatMap(ServiceFacet.init(rawValue:))
        }
        return route
    }
}
