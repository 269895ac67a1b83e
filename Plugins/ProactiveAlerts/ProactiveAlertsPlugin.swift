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
    /// Every chip's text starts with this, followed by the alert's title.
    public static let chipPrefix = "عندك إشعار من التنبيه الاستباقي: "
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
    public func suggestions() async throws -> [ChatSuggestion] {
        alerts.map { alert in
            ChatSuggestion(
                id: "\(Self.pluginID):\(alert.id)", text: Self.chipPrefix + alert.title, pluginID: Self.pluginID,
                payload: .object(["alertId": .string(alert.id)]))
        }
    }

    public func reply(to suggestion: ChatSuggestion) async throws -> GroundedReply? {
        guard suggestion.pluginID == Self.pluginID else { return nil }
        guard let alertId = suggestion.payload["alertId"]?.stringValue else {
            throw ToolError(tool: Self.pluginID, "the suggestion '\(suggestion.id)' carries no alertId")
        }
        guard let alert = alerts.first(where: { $0.id == alertId }) else {
            throw ToolError(tool: Self.pluginID, "the alert '\(alertId)' is no longer active")
        }
        return AlertReply.grounded(for: alert, userText: suggestion.text)
    }

    public var capabilities: [String] { ["تنبيهك بالوثائق التي قرب انتهاؤها أو انتهت (الرخصة، الجواز، الهوية)"] }

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
        let lines =
            active.isEmpty
            ? ["ليس عندك تنبيهات الآن: لا تنتهي أي وثيقة من وثائقك خلال \(arabicDays(window.days))."]
            : active.map { "\($0.title): \(AlertReply.remaining($0)) (\($0.document.expiryDate))." }
        let fallback = lines.joined(separator: "\n") + (active.isEmpty ? "" : "\nابدأ بالأقرب من الرابط أدناه.")
        let facts = active.map { AlertReply.facts(for: $0)[1] }
        let system = """
            You are Sanad, the assistant of the Absher government e-services app. Reply in Arabic only, one short \
            sentence per alert. Use only these facts, exactly, and add no other numbers or dates:
            \(lines.map { "- " + $0 }.joined(separator: "\n"))
            """
        return TypedAnswer(
            score: 1.5,
            reply: GroundedReply(
                messages: [.system(system), .user(question.text)], facts: facts,
                allowedNumbers: digitRuns(normalizeArabic(fallback)), requireArabic: true, fallback: fallback,
                deepLink: active.first?.deepLink))
    }

    /// The review and payment page of the service, for the user's own documents.
    public func destination(for link: DeepLink) async throws -> Destination? {
        guard let service = AlertServiceType(rawValue: link.serviceType) else { return nil }
        return try servicePage(service: service, link: link)
    }

    func servicePage(service: AlertServiceType, link: DeepLink) throws -> Destination {
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
        var fields = [
            Destination.Field("الخدمة", service.serviceName),
            Destination.Field("الوثيقة", service.documentName),
        ]
        if let n = doc.number { fields.append(Destination.Field("رقم الوثيقة", n)) }
        fields += [
            Destination.Field("تاريخ الانتهاء", doc.expiryDate.description),
            Destination.Field("الأيام المتبقية", days >= 0 ? "\(days)" : "منتهية منذ \(arabicDays(-days))"),
            Destination.Field("الرسوم", doc.renewalFeeSAR.map { "\($0) ريال" } ?? "غير معروفة"),
            Destination.Field("رقم التنبيه", link.alertId),
            Destination.Field("عنوان التنبيه", link.title),
        ]
        return Destination(
            screen: Self.dashboardScreen, title: "مراجعة الطلب والدفع — \(service.serviceName)", link: link,
            sections: [Destination.Section(fields: fields)],
            notes: ["راجع البيانات ثم ادفع الرسوم لإكمال \(service.serviceName)."])
    }
}
