import AbsherData
import Foundation
import SanadChat
import SanadCore

/// Dependents (التابعين): after the reply to a proactive alert, one message per dependent whose service is due
/// within the window (`ولدك حسام باقي له 30 يوم على اصدار رخصة`) with a `dependents` link; that link opens the
/// dependents page, which lists every complete dependent (entries with missing fields are left out and counted).
///
/// Options (host config): `userData` (required: the same user JSON file as `proactive-alerts`), `windowDays`
/// (default 90), `timeZone` (default `Asia/Riyadh`).
public final class DependentsPlugin: FeaturePlugin {
    public static let pluginID = "dependents"
    /// The deep link `serviceType` of dependents' messages.
    public static let linkType = "dependents"
    /// The destination screen of `dependents` links.
    public static let pageScreen = "dependents"
    public static let optionKeys = AbsherSettings.optionKeys

    public let id = DependentsPlugin.pluginID
    public let list: DependentList
    /// Services due within `window.days` days of `window.today` are reminded of.
    public let window: AbsherWindow

    /// Reads the options and the user data file; errors name the config file, the option or the data key.
    public convenience init(context: PluginContext) throws {
        let settings = try AbsherSettings(plugin: Self.pluginID, context: context)
        let file = settings.userData.file.path
        self.init(
            list: try DependentList(settings.userData.dependents, file: file, plugin: Self.pluginID),
            window: settings.window(now: context.now))
    }

    public init(list: DependentList, window: AbsherWindow) {
        self.list = list
        self.window = window
    }

    /// Dependents whose service is due in `0...windowDays` days, soonest first (ties keep file order).
    public var activeReminders: [(dependent: Dependent, daysRemaining: Int)] {
        let t = window.today
        return list.dependents.enumerated()
            .map { (offset: $0.offset, dependent: $0.element, days: t.days(until: $0.element.dueDate)) }
            .filter { $0.days >= 0 && $0.days <= window.days }
            .sorted { $0.days != $1.days ? $0.days < $1.days : $0.offset < $1.offset }
            .map { (dependent: $0.dependent, daysRemaining: $0.days) }
    }

    public var tools: [any Tool] { [listDependentsTool, openDependentsPageTool] }

    /// `list_dependents`: every complete dependent with days remaining, and the entries left out.
    var listDependentsTool: PluginTool {
        PluginTool(
            name: "list_dependents",
            description:
                "Lists the user's dependents with the service due and days remaining, the reminders within the window, and the entries left out for missing fields."
        ) { [self] _ in
            let t = window.today
            let active = Set(activeReminders.map(\.dependent.id))
            return .object([
                "today": .string(t.description), "windowDays": .number(Double(window.days)),
                "dependents": .array(
                    list.dependents.map { d in
                        let days = t.days(until: d.dueDate)
                        return .object([
                            "id": .string(d.id), "name": .string(d.name), "relationship": .string(d.relationship),
                            "service": .string(d.service), "dueDate": .string(d.dueDate.description),
                            "daysRemaining": .number(Double(days)), "reminder": .bool(active.contains(d.id)),
                            "message": .string(d.message(daysRemaining: days)),
                            "url": .string(d.deepLink.url(AbsherSettings.linkFormat)),
                        ])
                    }),
                "skipped": .array(
                    list.skipped.map {
                        .object([
                            "index": .number(Double($0.index)), "problems": .array($0.problems.map(JSONValue.string)),
                        ])
                    }),
            ])
        }
    }

    /// `open_dependents_page`: the dependents page.
    var openDependentsPageTool: PluginTool {
        PluginTool(
            name: "open_dependents_page",
            description: "Opens the dependents page listing every dependent with the service due and days remaining.",
            arguments: [ToolArgument("dependentId")]
        ) { [self] args in
            let id =
                args.values["dependentId"] == nil ? list.dependents.first?.id ?? "" : try args.string("dependentId")
            let title = list.dependents.first { $0.id == id }?.deepLink.title ?? "التابعين"
            let link = DeepLink(serviceType: Self.linkType, title: title, alertId: id.isEmpty ? "none" : id)
            if list.dependents.isEmpty { return page(link: link).json(AbsherSettings.linkFormat) }
            guard let page = try await destination(for: link) else {
                throw ToolError(tool: "open_dependents_page", "not a dependents link")
            }
            return page.json(AbsherSettings.linkFormat)
        }
    }

    /// After the reply to a proactive alert chip: one message per active dependent reminder not already in the
    /// chat (tapping a second alert, or the same one again, does not repeat them).
    public func followUps(after reply: ReplyContext) async throws -> [ChatFollowUp] {
        guard reply.suggestion?.pluginID == AbsherSettings.proactiveAlertsPluginID else { return [] }
        let shown = Set(reply.history.compactMap { $0.deepLink?.serviceType == Self.linkType ? $0.deepLink : nil })
        let shownIDs = Set(shown.map(\.alertId))
        return activeReminders.filter { !shownIDs.contains($0.dependent.id) }.map {
            ChatFollowUp(
                content: $0.dependent.message(daysRemaining: $0.daysRemaining, in: reply.language),
                deepLink: $0.dependent.deepLink(in: reply.language))
        }
    }

    public var capabilities: [String] { capabilities(in: .arabic) }

    public func capabilities(in language: ChatLanguage) -> [String] {
        language == .arabic
            ? ["مواعيد خدمات التابعين (الأبناء والبنات)"]
            : ["the due dates of your dependents' services (sons and daughters)"]
    }

    /// Words that ask about dependents in general (Arabic, Gulf dialect, English).
    static let keywords = [
        "تابع*", "عيال*", "اولاد*", "ابناء*", "ابني", "ابنتي", "بنات*", "اسرت*", "عائلت*", "عايلت*", "dependent*",
        "child*", "kids", "son*", "daughter*", "family",
    ]

    /// A typed question about dependents: the ones it names (by name, 3, or by relationship as `ولدي`, 3), else all
    /// of them (2, for a general word like `عيالي`); each with the service due and the days left.
    public func answer(to question: TypedQuestion) async throws -> TypedAnswer? {
        let all = list.dependents
        let named = all.filter { d in
            question.mentions(d.name) || question.mentions(relationshipStem(d.relationship) + "*")
                || d.english["name"].map(question.mentions) == true
        }
        guard !named.isEmpty || question.mentions(Self.keywords), !all.isEmpty else { return nil }
        let chosen = named.isEmpty ? all : named
        let t = window.today
        let language = question.language
        let arabic = language == .arabic
        let lines = chosen.map { d -> String in
            let days = t.days(until: d.dueDate)
            if days >= 0 {
                return d.message(daysRemaining: days, in: language)
                    + (arabic ? " (الموعد \(d.dueDate))." : " (on \(d.dueDate)).")
            }
            return arabic
                ? "\(d.relationship) \(d.name) فات موعد \(d.service) منذ \(arabicDays(-days, genitive: true)) (\(d.dueDate))."
                : "\(capitalized(d.relationship(in: language))) \(d.name(in: language)): \(d.service(in: language)) was due "
                    + "\(englishCount(-days, .day)) ago (\(d.dueDate))."
        }
        let fallback =
            lines.joined(separator: "\n")
            + (arabic
                ? "\nتفاصيلهم في صفحة التابعين من الرابط أدناه."
                : "\nTheir details are on the dependents page, in the link below.")
        let facts = chosen.map { d in
            let days = abs(t.days(until: d.dueDate))
            return GroundingFact(
                name: "\(d.name(in: language)) (\(days))",
                accepted: arabic
                    ? [
                        arabicDays(days), arabicDays(days, genitive: true), "\(days) يوم", "\(days) يوما",
                        "\(days) أيام",
                    ] : ["\(days) day", "\(days)-day"])
        }
        let system = """
            You are Sanad, the assistant of the Absher government e-services app. Reply in \(arabic ? "Arabic" : "English") only, in one short \
            sentence per dependent. Use only these facts, exactly, and add no other numbers or dates:
            \(lines.map { "- " + $0 }.joined(separator: "\n"))
            Then tell the user the dependents page is in the link below.
            """
        return TypedAnswer(
            score: named.isEmpty ? 2 : 3,
            reply: GroundedReply(
                messages: [.system(system), .user(question.text)], facts: facts,
                allowedNumbers: digitRuns(normalizeArabic(fallback)), language: language, fallback: fallback,
                deepLink: chosen[0].deepLink(in: language)))
    }

    public func destination(for link: DeepLink) async throws -> Destination? {
        try await destination(for: link, in: .arabic)
    }

    public func destination(for link: DeepLink, in language: ChatLanguage) async throws -> Destination? {
        guard link.serviceType == Self.linkType else { return nil }
        guard list.dependents.contains(where: { $0.id == link.alertId }) else {
            throw ChatError.navigationFailed(
                link: link,
                reason:
                    "no dependent '\(link.alertId)' (dependents: \(list.dependents.map(\.id).joined(separator: ", ")))")
        }
        return page(link: link, in: language)
    }

    /// The dependents page: every complete dependent with name, relationship, service, due date and days
    /// remaining; the one the link names is marked.
    public func page(link: DeepLink, in language: ChatLanguage = .arabic) -> Destination {
        let t = window.today
        let arabic = language == .arabic
        let sections = list.dependents.map { d -> Destination.Section in
            let days = t.days(until: d.dueDate)
            let mark = d.id == link.alertId ? (arabic ? "  ◀ من الإشعار" : "  ◀ from the alert") : ""
            let late =
                arabic
                ? "فات موعدها منذ \(arabicDays(-days, genitive: true))" : "overdue by \(englishCount(-days, .day))"
            return Destination.Section(
                heading:
                    "\(arabic ? d.relationship : capitalized(d.relationship(in: language))) \(d.name(in: language))\(mark)",
                fields: [
                    Destination.Field(arabic ? "الاسم" : "Name", d.name(in: language)),
                    Destination.Field(arabic ? "الصلة" : "Relationship", d.relationship(in: language)),
                    Destination.Field(arabic ? "الخدمة" : "Service", d.service(in: language)),
                    Destination.Field(arabic ? "تاريخ الاستحقاق" : "Due date", d.dueDate.description),
                    Destination.Field(arabic ? "الأيام المتبقية" : "Days remaining", days >= 0 ? "\(days)" : late),
                ])
        }
        var notes: [String] = []
        if list.dependents.isEmpty { notes.append(arabic ? "لا يوجد تابعون." : "No dependents.") }
        if !list.skipped.isEmpty {
            let detail = list.skipped.map { "#\($0.index + 1): \($0.problems.joined(separator: ", "))" }.joined(
                separator: arabic ? "؛ " : "; ")
            notes.append(
                arabic
                    ? "لم يُعرض \(arabicCount(list.skipped.count, .record)) لنقص في "
                        + "\(list.skipped.count == 1 ? "بياناته" : list.skipped.count == 2 ? "بياناتهما" : "بياناتها") (\(detail))."
                    : "\(englishCount(list.skipped.count, .record)) left out for missing data (\(detail)).")
        }
        return Destination(
            screen: Self.pageScreen, title: arabic ? "التابعين" : "Dependents", link: link, sections: sections,
            notes: notes)
    }
}
