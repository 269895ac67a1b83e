import AbsherData
import Foundation
import SanadChat
import SanadCore

/// Proactive alerts (التنبيه الاستباقي): documents that expire soon become chips when the chat opens; tapping one
/// asks the engine for a grounded Arabic reply with a deep link to the renewal service's review and payment page.
///
/// Options (host config): `userData` (required: the user's JSON file, relative to the config's folder),
/// `windowDays` (default 90: documents expiring within this many days are alerts), `timeZone` (default
/// `Asia/Riyadh`: the zone in which "today" is taken from the clock).
public final class ProactiveAlertsPlugin: FeaturePlugin {
    /// The id configs use.
    public static let pluginID = AbsherSettings.proactiveAlertsPluginID
    /// Every chip's text starts with this, followed by the alert's title (`chipPrefix(in:)` in a language).
    public static let chipPrefix = chipPrefix(in: .arabic)

    public static func chipPrefix(in language: ChatLanguage) -> String {
        language == .arabic ? "عندك إشعار من التنبيه الاستباقي: " : "You have a proactive alert: "
    }
    /// The destination screen of the user's own alerts.
    public static let dashboardScreen = "dashboard"
    public static let defaultWindowDays = AbsherSettings.defaultWindowDays
    public static let optionKeys = AbsherSettings.optionKeys

    public let id = ProactiveAlertsPlugin.pluginID
    public let userData: UserData
    /// Documents expiring within `window.days` days of `window.today` are alerts.
    public let window: AbsherWindow

    /// Reads the options and the user data file; errors name the config file, the option or the data key.
    public convenience init(context: PluginContext) throws {
        let settings = try AbsherSettings(plugin: Self.pluginID, context: context)
        self.init(userData: settings.userData, window: settings.window(now: context.now))
    }

    public init(userData: UserData, window: AbsherWindow) {
        self.userData = userData
        self.window = window
    }

    /// Asia/Riyadh (`AbsherSettings.defaultTimeZone`).
    public static let defaultTimeZone = AbsherSettings.defaultTimeZone

    /// The active alerts now, soonest first.
    public var alerts: [ProactiveAlert] {
        deriveAlerts(from: userData.documents, today: window.today, windowDays: window.days)
    }

    public var tools: [any Tool] { [listAlertsTool, openServicePageTool] }

    /// One chip per active alert, in alert order: `عندك إشعار من التنبيه الاستباقي: <title>`.
    public func suggestions() async throws -> [ChatSuggestion] { try await suggestions(in: .arabic) }

    public func suggestions(in language: ChatLanguage) async throws -> [ChatSuggestion] {
        alerts.map { alert in
            ChatSuggestion(
                id: "\(Self.pluginID):\(alert.id)", text: Self.chipPrefix(in: language) + alert.title(in: language),
                pluginID: Self.pluginID, payload: .object(["alertId": .string(alert.id)]))
        }
    }

    public func reply(to suggestion: ChatSuggestion) async throws -> GroundedReply? {
        try await reply(to: suggestion, in: .arabic)
    }

    public func reply(to suggestion: ChatSuggestion, in language: ChatLanguage) async throws -> GroundedReply? {
        guard suggestion.pluginID == Self.pluginID else { return nil }
        guard let alertId = suggestion.payload["alertId"]?.stringValue else {
            throw ToolError(tool: Self.pluginID, "the suggestion '\(suggestion.id)' carries no alertId")
        }
        guard let alert = alerts.first(where: { $0.id == alertId }) else {
            throw ToolError(tool: Self.pluginID, "the alert '\(alertId)' is no longer active")
        }
        return AlertReply.grounded(for: alert, userText: suggestion.text, in: language)
    }

    public var capabilities: [String] { capabilities(in: .arabic) }

    public func capabilities(in language: ChatLanguage) -> [String] {
        switch language {
        case .arabic: return ["تنبيهك بالوثائق التي قرب انتهاؤها أو انتهت (الرخصة، الجواز، الهوية)"]
        case .english:
            return ["alerting you to your documents that are about to expire or have expired (licence, passport, ID)"]
        }
    }

    /// Words that ask for the user's alerts (Arabic, Gulf dialect, English).
    static let keywords = [
        "تنبيه*", "اشعار*", "وش عندي", "ايش عندي", "شو عندي", "وثائقي", "مستنداتي", "اوراقي", "alert*",
        "notification*", "my documents",
    ]

    /// A typed question about the user's alerts (1.5: below a question that names a service): every active alert
    /// with its days, or that there is none within the window.
    public func answer(to question: TypedQuestion) async throws -> TypedAnswer? {
        guard question.mentions(Self.keywords) else { return nil }
        let active = alerts
        let language = question.language
        let arabic = language == .arabic
        let lines =
            active.isEmpty
            ? [
                arabic
                    ? "ليس عندك تنبيهات الآن: لا تنتهي أي وثيقة من وثائقك خلال \(arabicDays(window.days, genitive: true))."
                    : "You have no alerts now: none of your documents expires within \(englishCount(window.days, .day))."
            ]
            : active.map {
                "\($0.title(in: language)): \(AlertReply.remaining($0, in: language)) (\($0.document.expiryDate))."
            }
        let next = arabic ? "ابدأ بالأقرب من الرابط أدناه." : "Start with the soonest from the link below."
        let fallback = lines.joined(separator: "\n") + (active.isEmpty ? "" : "\n" + next)
        let facts = active.map { AlertReply.facts(for: $0, in: language)[1] }
        let system = """
            You are Sanad, the assistant of the Absher government e-services app. Reply in \(arabic ? "Arabic" : "English") only, one short \
            sentence per alert. Use only these facts, exactly, and add no other numbers or dates:
            \(lines.map { "- " + $0 }.joined(separator: "\n"))
            """
        return TypedAnswer(
            score: 1.5,
            reply: GroundedReply(
                messages: [.system(system), .user(question.text)], facts: facts,
                allowedNumbers: digitRuns(normalizeArabic(fallback)), language: language, fallback: fallback,
                deepLink: active.first?.deepLink(in: language)))
    }

    /// The review and payment page of the service, for the user's own documents.
    public func destination(for link: DeepLink) async throws -> Destination? {
        try await destination(for: link, in: .arabic)
    }

    public func destination(for link: DeepLink, in language: ChatLanguage) async throws -> Destination? {
        guard let service = AlertServiceType(rawValue: link.serviceType) else { return nil }
        return try servicePage(service: service, link: link, in: language)
    }

    func servicePage(service: AlertServiceType, link: DeepLink, in language: ChatLanguage = .arabic) throws
        -> Destination
    {
        guard let doc = userData.documents.first(where: { $0.id == link.alertId }) else {
            let ids = userData.documents.map(\.id)
            throw ChatError.navigationFailed(
                link: link,
                reason:
                    "no alert '\(link.alertId)' for this user (the user's documents: \(ids.isEmpty ? "none" : ids.joined(separator: ", ")))"
            )
        }
        guard doc.type.renewalService == service else {
            throw ChatError.navigationFailed(
                link: link,
                reason: "the alert '\(doc.id)' is a \(doc.type.renewalService.rawValue) alert, not \(service.rawValue)")
        }
        let days = window.today.days(until: doc.expiryDate)
        let name = service.serviceName(in: language)
        let l = PageLabels(language)
        // A name that starts a line starts with a capital (English names are written for mid-sentence).
        let heading = name.prefix(1).uppercased() + name.dropFirst()
        var fields = [
            Destination.Field(l.service, heading), Destination.Field(l.document, service.documentName(in: language)),
        ]
        if let n = doc.number { fields.append(Destination.Field(l.number, n)) }
        fields += [
            Destination.Field(l.expiry, doc.expiryDate.description),
            Destination.Field(l.remaining, days >= 0 ? "\(days)" : l.expiredAgo(-days)),
            Destination.Field(l.fee, doc.renewalFeeSAR.map(l.riyals) ?? l.unknownFee),
            Destination.Field(l.alertTitle, link.title),
        ]
        return Destination(
            screen: Self.dashboardScreen, title: l.title(heading), link: link,
            sections: [Destination.Section(fields: fields)],
            notes: [l.note(name)])
    }
}

/// The labels of the review and payment page, in a language.
struct PageLabels {
    let language: ChatLanguage
    init(_ language: ChatLanguage) { self.language = language }

    private var arabic: Bool { language == .arabic }
    var service: String { arabic ? "الخدمة" : "Service" }
    var document: String { arabic ? "الوثيقة" : "Document" }
    var number: String { arabic ? "رقم الوثيقة" : "Document number" }
    var expiry: String { arabic ? "تاريخ الانتهاء" : "Expiry date" }
    var remaining: String { arabic ? "الأيام المتبقية" : "Days remaining" }
    var fee: String { arabic ? "الرسوم" : "Fee" }
    var unknownFee: String { arabic ? "غير معروفة" : "unknown" }
    var alertTitle: String { arabic ? "عنوان التنبيه" : "Alert title" }
    func expiredAgo(_ days: Int) -> String {
        arabic ? "منتهية منذ \(arabicDays(days, genitive: true))" : "expired \(englishCount(days, .day)) ago"
    }
    func riyals(_ amount: Int) -> String { arabic ? "\(amount) ريال" : "\(amount) SAR" }
    func title(_ service: String) -> String {
        arabic ? "مراجعة الطلب والدفع — \(service)" : "Review and payment — \(service)"
    }
    func note(_ service: String) -> String {
        arabic
            ? "راجع البيانات ثم ادفع الرسوم لإكمال \(service)."
            : "Review the details, then pay the fee to complete the \(service)."
    }
}
