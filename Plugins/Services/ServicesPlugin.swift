import AbsherData
import Foundation
import SanadChat
import SanadCore

/// Absher services (دليل الخدمات): answers typed questions about a service — what it is, its fee, what it needs,
/// when the user's own document expires — from a knowledge base file and the user's data, never from the model's
/// memory, and attaches the service's link (the renewal page of the user's document, or the service's own
/// information page, which this plugin opens).
///
/// Options (host config): `userData` (required: the user's JSON file), `services` (default: the shipped
/// `Plugins/AbsherData/Resources/services.json`), `windowDays`, `timeZone` (as the other Absher plugins).
public final class ServicesPlugin: FeaturePlugin {
    public static let pluginID = "absher-services"
    /// The deep link `serviceType` of a service's information page.
    public static let infoLinkType = "service_info"
    /// The destination screen of `service_info` links.
    public static let infoScreen = "service-info"
    public static let optionKeys = AbsherSettings.optionKeys + ["services"]

    public let id = ServicesPlugin.pluginID
    public let catalog: ServiceCatalog
    public let userData: UserData
    /// Today, for the days until the user's documents expire.
    public let window: AbsherWindow

    /// Reads the options, the user data file and the knowledge base; errors name the file and the key.
    public convenience init(context: PluginContext) throws {
        let options = try PluginOptions(plugin: Self.pluginID, context: context, allowed: Self.optionKeys)
        let settings = try AbsherSettings(options: options)
        guard let file = try options.file("services") ?? AbsherSettings.servicesURL else {
            throw PluginError.invalidOption(
                plugin: Self.pluginID, configFile: context.configFile?.path, key: "services",
                problem: "missing, and the shipped services.json was not found; name the knowledge base file")
        }
        self.init(
            catalog: try ServiceCatalog.load(from: file, plugin: Self.pluginID), userData: settings.userData,
            window: settings.window(now: context.now))
    }

    /// How a typed question is routed; nil: the keyword router.
    public let routing: (@Sendable (TypedQuestion) async throws -> ServiceRoute?)?

    public init(
        catalog: ServiceCatalog, userData: UserData, window: AbsherWindow,
        routing: (@Sendable (TypedQuestion) async throws -> ServiceRoute?)? = nil
    ) {
        self.catalog = catalog
        self.userData = userData
        self.window = window
        self.routing = routing
    }

    /// The same plugin with another routing method (the evaluation's embeddings or model router).
    public func routed(by routing: @escaping @Sendable (TypedQuestion) async throws -> ServiceRoute?) -> ServicesPlugin
    {
        ServicesPlugin(catalog: catalog, userData: userData, window: window, routing: routing)
    }

    public var capabilities: [String] { capabilities(in: .arabic) }

    public func capabilities(in language: ChatLanguage) -> [String] {
        let names = catalog.services.map { $0.name(in: language) }
        return language == .arabic
            ? ["معلومات الخدمات ورسومها ومتطلباتها وروابطها: " + names.joined(separator: "، ")]
            : ["the services' information, fees, requirements and links: " + names.joined(separator: ", ")]
    }

    /// The keyword router over this plugin's knowledge base and user.
    public var router: ServiceRouter { ServiceRouter(catalog: catalog, userData: userData) }

    /// The service `question` names (see `ServiceRouter` for the score), answered for every facet it asks about
    /// and for the person or vehicle it names.
    public func answer(to question: TypedQuestion) async throws -> TypedAnswer? {
        let found: ServiceRoute?
        if let routing { found = try await routing(question) } else { found = router.route(question) }
        guard let route = found else { return nil }
        return TypedAnswer(score: route.score, reply: reply(question.text, route: route, in: question.language))
    }

    /// The grounded reply to `text` on `route` (a route from any method: keywords, embeddings, the model).
    public func reply(_ text: String, route: ServiceRoute, in language: ChatLanguage) -> GroundedReply {
        let doc = route.service.document.flatMap { kind in userData.documents.first { $0.type.rawValue == kind } }
        return ServiceAnswer.grounded(
            question: text, route: route, doc: doc, data: userData, today: window.today, in: language)
    }

    public var tools: [any Tool] {
        [
            PluginTool(
                name: "list_services",
                description:
                    "Lists the services Sanad knows: id, name, description, fees in riyals, requirements and link type."
            ) { [self] _ in .array(catalog.services.map(Self.json)) },
            PluginTool(
                name: "open_service_info",
                description: "Opens a service's information page (description, fees, requirements).",
                arguments: [ToolArgument("serviceId", required: true)]
            ) { [self] args in
                let id = try args.string("serviceId")
                guard let service = catalog.services.first(where: { $0.id == id }) else {
                    throw ToolError(
                        tool: "open_service_info",
                        "no service '\(id)'; known: \(catalog.services.map(\.id).joined(separator: ", "))")
                }
                return page(service, link: ServiceAnswer.link(service: service, doc: nil)).json(
                    AbsherSettings.linkFormat)
            },
        ]
    }

    /// `service_info` links: the service's information page.
    public func destination(for link: DeepLink) async throws -> Destination? {
        try await destination(for: link, in: .arabic)
    }

    public func destination(for link: DeepLink, in language: ChatLanguage) async throws -> Destination? {
        guard link.serviceType == Self.infoLinkType else { return nil }
        guard let service = catalog.services.first(where: { $0.id == link.alertId }) else {
            throw ChatError.navigationFailed(
                link: link,
                reason:
                    "no service '\(link.alertId)' (services: \(catalog.services.map(\.id).joined(separator: ", ")))")
        }
        return page(service, link: link, in: language)
    }

    func page(_ service: ServiceInfo, link: DeepLink, in language: ChatLanguage = .arabic) -> Destination {
        let arabic = language == .arabic
        let unknown = arabic ? "ليس في بياناتي" : "not in my data"
        func field(_ facet: ServiceFacet, _ value: String) -> Destination.Field {
            Destination.Field(ServiceAnswer.label(facet, in: language), value)
        }
        func rows(_ facet: ServiceFacet, _ items: [String]?) -> [Destination.Field] {
            guard let items else { return [field(facet, unknown)] }
            return items.map { field(facet, $0) }
        }
        var fields = [
            Destination.Field(arabic ? "الخدمة" : "Service", service.name(in: language)),
            Destination.Field(arabic ? "الوصف" : "Description", service.description(in: language)),
            field(.eligibility, service.eligibility(in: language) ?? unknown),
        ]
        fields += rows(.fee, service.fees.map { $0.map { $0.sentence(in: language) } })
        fields += rows(.lateFine, service.lateFines.map { $0.map { $0.sentence(in: language) } })
        fields += rows(.requirements, service.requirements(in: language))
        fields += rows(.steps, service.steps(in: language))
        fields.append(field(.place, service.whereText(in: language) ?? unknown))
        let src = service.source
        fields.append(Destination.Field(arabic ? "المصدر" : "Source", "\(src.page) — \(src.url) (\(src.asOf))"))
        let file = catalog.file.lastPathComponent
        return Destination(
            screen: Self.infoScreen, title: service.name(in: language), link: link,
            sections: [Destination.Section(fields: fields)],
            notes: [
                arabic
                    ? "المعلومات من دليل الخدمات (\(file))، ولم يُتحقق منها على الإنترنت من هذا الجهاز: راجع المصدر."
                    : "From the services guide (\(file)), not re-checked online from this device: see the source."
            ])
    }

    static func json(_ s: ServiceInfo) -> JSONValue {
        var o: [String: JSONValue] = [
            "id": .string(s.id), "name": .string(s.name), "description": .string(s.description),
            "fees": fees(s.fees), "lateFines": fees(s.lateFines),
            "eligibility": s.eligibility.map(JSONValue.string) ?? .string(ServiceCatalog.unknown),
            "requirements": s.requirements.map { .array($0.map(JSONValue.string)) } ?? .string(ServiceCatalog.unknown),
            "steps": s.steps.map { .array($0.map(JSONValue.string)) } ?? .string(ServiceCatalog.unknown),
            "where": s.whereText.map(JSONValue.string) ?? .string(ServiceCatalog.unknown),
            "source": .object([
                "url": .string(s.source.url), "page": .string(s.source.page), "asOf": .string(s.source.asOf),
            ]),
            "linkType": .string(s.linkType),
        ]
        if let d = s.document { o["document"] = .string(d) }
        return .object(o)
    }

    static func fees(_ fees: [ServiceInfo.Fee]?) -> JSONValue {
        guard let fees else { return .string(ServiceCatalog.unknown) }
        return .array(fees.map { .object(["label": .string($0.label), "amountSAR": .number(Double($0.amountSAR))]) })
    }
}
