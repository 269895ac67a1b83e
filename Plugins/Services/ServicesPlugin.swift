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

    public init(catalog: ServiceCatalog, userData: UserData, window: AbsherWindow) {
        self.catalog = catalog
        self.userData = userData
        self.window = window
    }

    public var capabilities: [String] { capabilities(in: .arabic) }

    public func capabilities(in language: ChatLanguage) -> [String] {
        let names = catalog.services.map { $0.name(in: language) }
        return language == .arabic
            ? ["معلومات الخدمات ورسومها ومتطلباتها وروابطها: " + names.joined(separator: "، ")]
            : ["the services' information, fees, requirements and links: " + names.joined(separator: ", ")]
    }

    /// The service `question` names (2 for its subject, +1 when it also names the action, as `تجديد` or `اصدار`;
    /// the first in the file wins a tie), answered for the aspects it asks about.
    public func answer(to question: TypedQuestion) async throws -> TypedAnswer? {
        var best: (score: Double, service: ServiceInfo)?
        for service in catalog.services where question.mentions(service.keywords) {
            let score = 2.0 + (question.mentions(service.actionKeywords) ? 1 : 0)
            if score > (best?.score ?? 0) { best = (score, service) }
        }
        guard let (score, service) = best else { return nil }
        let doc = service.document.flatMap { type in userData.documents.first { $0.type == type } }
        return TypedAnswer(
            score: score,
            reply: ServiceAnswer.grounded(
                question: question.text, service: service, doc: doc, today: window.today,
                aspects: ServiceAspect.asked(in: question), in: question.language))
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
        var fields = [
            Destination.Field(arabic ? "الخدمة" : "Service", service.name(in: language)),
            Destination.Field(arabic ? "الوصف" : "Description", service.description(in: language)),
        ]
        fields += service.fees.map { Destination.Field(arabic ? "الرسوم" : "Fee", $0.sentence(in: language)) }
        fields += service.requirements(in: language).map { Destination.Field(arabic ? "المتطلبات" : "Requirement", $0) }
        let source = catalog.file.lastPathComponent
        return Destination(
            screen: Self.infoScreen, title: service.name(in: language), link: link,
            sections: [Destination.Section(fields: fields)],
            notes: [arabic ? "المعلومات من دليل الخدمات (\(source))." : "From the services guide (\(source))."])
    }

    static func json(_ s: ServiceInfo) -> JSONValue {
        var o: [String: JSONValue] = [
            "id": .string(s.id), "name": .string(s.name), "description": .string(s.description),
            "fees": .array(
                s.fees.map { .object(["label": .string($0.label), "amountSAR": .number(Double($0.amountSAR))]) }),
            "requirements": .array(s.requirements.map(JSONValue.string)), "linkType": .string(s.linkType),
        ]
        if let d = s.document { o["document"] = .string(d.rawValue) }
        return .object(o)
    }
}
