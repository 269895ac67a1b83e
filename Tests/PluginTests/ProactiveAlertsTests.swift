import AbsherData
import DependentsPlugin
import Foundation
import ProactiveAlertsPlugin
import SanadChat
import SanadCore
import SanadTestSupport
import Testing

/// Plugins over generated data, with the clock fixed at `now`.
func makePlugins(_ json: JSONValue, now: Date, window: Int = 90) throws -> (ProactiveAlertsPlugin, DependentsPlugin) {
    let data = try UserData.decode(json, file: generatedFile, plugin: "test")
    let alerts = ProactiveAlertsPlugin(userData: data, window: AbsherWindow(days: window, now: { now }))
    let dependents = DependentsPlugin(
        list: try DependentList(data.dependents, file: generatedFile.path, plugin: "test"),
        window: AbsherWindow(days: window, now: { now }))
    return (alerts, dependents)
}

/// An opened chat over `plugins` with a scripted engine.
func openChat(
    _ plugins: [any FeaturePlugin], engine: ScriptedSession = ScriptedSession(replies: [["نعم"]]),
    now: Date = sampleNow,
    log: EventLog? = nil, wording: ChatWording? = nil, showDrafts: Bool = false, language: ChatLanguage = .arabic,
    phrasing: GroundedPhrasing = .model
)
    async -> ChatSession
{
    let session = ChatSession(
        plugins: plugins,
        configuration: {
            // The Absher product in `language` (its wording in both languages), or one custom wording.
            var c = AbsherSettings.product.configuration(language: language)
            if let wording { c = ChatConfiguration(wording: wording, linkFormat: AbsherSettings.linkFormat) }
            c.showDrafts = showDrafts
            c.groundedPhrasing = phrasing
            return c
        }(),
        now: { now },
        loadEngine: { engine })
    await session.open(onEvent: log.map(\.handler) ?? { @Sendable _ in })
    return session
}

/// Days from `now`'s date in Riyadh to `date`, computed independently with Foundation's calendar.
func referenceDays(from now: Date, to date: CivilDate) throws -> Int {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = riyadh
    let start = calendar.startOfDay(for: now)
    let end = try #require(calendar.date(from: DateComponents(year: date.year, month: date.month, day: date.day)))
    return try #require(calendar.dateComponents([.day], from: start, to: end).day)
}

@Suite("Proactive alerts")
struct ProactiveAlertsTests {
    @Test(
        "the sample user at 2026-11-22: licence in 45 days, then passport in 75; the national ID is outside the window")
    func sample() async throws {
        let url = try #require(AbsherSettings.sampleUserDataURL)
        let plugin = ProactiveAlertsPlugin(
            userData: try UserData.load(from: url, plugin: "t"), window: AbsherWindow(now: { sampleNow }))
        #expect(plugin.window.today.description == "2026-11-22")
        #expect(plugin.alerts.map(\.serviceType) == [.drivingLicenseRenewal, .passportRenewal])
        #expect(plugin.alerts.map(\.daysRemaining) == [45, 75])
        let chips = try await plugin.suggestions()
        #expect(chips.first?.text == "عندك إشعار من التنبيه الاستباقي: رخصة قيادتك على وشك الانتهاء")
        #expect(Set(plugin.userData.documents.map(\.type)) == Set(DocumentType.allCases))
    }

    @Test(
        "an expired passport is an overdue alert first, with its own title, a reply that says since when, and its link")
    func overdue() async throws {
        let json = JSONValue.object([
            "documents": .array([
                .object([
                    "id": .string("p1"), "type": .string("passport"), "expiryDate": .string("2026-11-19"),
                    "renewalFeeSAR": .number(300),
                ]),
                .object([
                    "id": .string("l1"), "type": .string("driving_license"), "expiryDate": .string("2026-12-10"),
                ]),
            ]),
            "dependents": .array([]),
        ])
        let (plugin, _) = try makePlugins(json, now: sampleNow)
        #expect(plugin.alerts.map(\.id) == ["p1", "l1"] && plugin.alerts.map(\.daysRemaining) == [-3, 18])
        let chips = try await plugin.suggestions()
        #expect(chips.first?.text == "عندك إشعار من التنبيه الاستباقي: جواز سفرك منتهي")
        let chip = try #require(chips.first)
        let reply = try #require(try await plugin.reply(to: chip))
        #expect(
            reply.fallback.hasPrefix("جواز سفرك منتهي: انتهى جواز السفر منذ 3 أيام (في 2026-11-19).")
                && reply.fallback.contains("الرسوم 300 ريال"), "\(reply.fallback)")
        #expect(reply.deepLink?.alertId == "p1" && reply.deepLink?.title == "جواز سفرك منتهي")
        let verdict = GroundingCheck.verify("جواز سفرك منتهي منذ 3 أيام، جدده الآن من الرابط.", against: reply)
        #expect(verdict.isVerified, "\(verdict)")
        let link = try #require(reply.deepLink)
        let page = try #require(try await plugin.destination(for: link))
        #expect(page.sections.flatMap(\.fields).contains { $0.value == "منتهية منذ 3 أيام" })
    }

    @Test(
        "alerts are exactly the expired documents and those expiring within the window, most overdue first, days from the clock (300 cases)"
    )
    func derivation() throws {
        try forAll(cases: 300) { rng, c in
            let now = randomNow(&rng)
            let today = CivilDate.today(now, in: riyadh)
            let window = rng.int(0...120)
            let data = try UserData.decode(randomUserJSON(&rng, today: today), file: generatedFile, plugin: "t")
            let alerts = ProactiveAlertsPlugin(userData: data, window: AbsherWindow(days: window, now: { now })).alerts
            var expected: [(Int, UserDocument)] = []
            for doc in data.documents {
                let days = try referenceDays(from: now, to: doc.expiryDate)
                if days <= window { expected.append((days, doc)) }
            }
            #expect(alerts.count == expected.count, c.label)
            #expect(Set(alerts.map(\.id)) == Set(expected.map(\.1.id)), c.label)
            for a in alerts {
                #expect(try a.daysRemaining == referenceDays(from: now, to: a.document.expiryDate), c.label)
                #expect(a.serviceType == a.document.type.renewalService && a.deepLink.alertId == a.id, c.label)
            }
            #expect(zip(alerts, alerts.dropFirst()).allSatisfy { $0.daysRemaining <= $1.daysRemaining }, c.label)
        }
    }

    // Feature: absher-chat-plugins, Property 1: chips correspond one-to-one with alerts
    // Feature: absher-chat-plugins, Property 2: chip text = prefix + title
    @Test(
        "chips correspond one-to-one with alerts, in alert order, text = prefix + title; no alerts → greeting only (200 cases)"
    )
    func chips() async throws {
        try await forAll { rng, c in
            let now = randomNow(&rng)
            let (alerts, dependents) = try makePlugins(
                randomUserJSON(&rng, today: CivilDate.today(now, in: riyadh)), now: now, window: rng.int(0...120))
            let session = await openChat([alerts, dependents], now: now)
            let chips = await session.suggestions
            let expected = alerts.alerts
            #expect(chips.count == expected.count, c.label)
            for (chip, alert) in zip(chips, expected) {
                #expect(chip.text == ProactiveAlertsPlugin.chipPrefix + alert.title, c.label)
                #expect(chip.text.hasPrefix("عندك إشعار من التنبيه الاستباقي: "), c.label)
                #expect(
                    chip.payload["alertId"]?.stringValue == alert.id && chip.pluginID == "proactive-alerts", c.label)
            }
            #expect(Set(chips.map(\.id)).count == chips.count, c.label)
            let messages = await session.messages
            #expect(messages.count == 1 && messages.first?.content == AbsherSettings.greeting, c.label)
        }
    }

    // Feature: absher-chat-plugins, Property 3: every deep link navigates to the right destination with context preserved
    @Test("every alert's link opens its service's review and payment page with the context kept (200 cases)")
    func alertNavigation() async throws {
        try await forAll { rng, c in
            let now = randomNow(&rng)
            let (alerts, dependents) = try makePlugins(
                randomUserJSON(&rng, today: CivilDate.today(now, in: riyadh)), now: now)
            for alert in alerts.alerts {
                let session = await openChat([alerts, dependents], now: now)
                let link =
                    rng.bool()
                    ? alert.deepLink
                    : try DeepLink(
                        url: alert.deepLink.url(AbsherSettings.linkFormat), format: AbsherSettings.linkFormat)
                let page = try await session.follow(link)
                #expect(page.screen == "dashboard" && page.link == link, c.label)
                let shown = await session.snapshot()
                #expect(shown.presented == page && !shown.isInputEnabled, c.label)
                let fields = Dictionary(
                    page.sections.flatMap(\.fields).map { ($0.label, $0.value) }, uniquingKeysWith: { a, _ in a })
                #expect(fields["رقم التنبيه"] == nil && fields["الخدمة"] == alert.serviceType.serviceName, c.label)
                let days = alert.daysRemaining
                #expect(
                    fields["الأيام المتبقية"]
                        == (days >= 0 ? "\(days)" : "منتهية منذ \(arabicDays(-days, genitive: true))"), c.label)
                #expect(
                    fields["الرسوم"] == (alert.document.renewalFeeSAR.map { "\($0) ريال" } ?? "غير معروفة"), c.label)
                #expect(
                    page.text(AbsherSettings.linkFormat).contains(alert.id)
                        && page.text(AbsherSettings.linkFormat).contains(link.url(AbsherSettings.linkFormat)), c.label)
                await session.returnToChat()
                let back = await session.snapshot()
                #expect(back.presented == nil && back.isInputEnabled, c.label)
            }
        }
    }

    @Test(
        "links to unknown alerts, wrong service types or unknown screens fail and leave the user where they were (200 cases)"
    )
    func failedNavigation() async throws {
        try await forAll { rng, c in
            let now = randomNow(&rng)
            let (alerts, dependents) = try makePlugins(
                randomUserJSON(&rng, today: CivilDate.today(now, in: riyadh)), now: now)
            let session = await openChat([alerts, dependents], now: now)
            let b = await session.snapshot()
            let before = (b.messages, b.suggestions, b.isInputEnabled)
            let docs = alerts.userData.documents
            var link: DeepLink
            switch rng.int(0...2) {
            case 0:
                link = DeepLink(
                    serviceType: rng.pick(AlertServiceType.allCases).rawValue, title: "x",
                    alertId: "missing-" + rng.string(from: Alphabet.any, length: 1...8))
            case 1 where !docs.isEmpty:
                let doc = rng.pick(docs)
                let other = AlertServiceType.allCases.filter { $0 != doc.type.renewalService }
                link = DeepLink(serviceType: rng.pick(other).rawValue, title: "x", alertId: doc.id)
            default:
                link = DeepLink(
                    serviceType: "unknown_" + rng.string(from: Alphabet.serviceType, length: 1...8), title: "",
                    alertId: "a")
            }
            await #expect(throws: ChatError.self, c.label) { try await session.follow(link) }
            let a = await session.snapshot()
            let after = a.messages
            #expect(after.count == before.0.count + 1 && Array(after.dropLast()) == before.0, c.label)
            #expect(after.last?.isUser == false && after.last?.content.contains("تعذّر فتح الرابط") == true, c.label)
            #expect(a.presented == nil, c.label)
            #expect(a.suggestions == before.1 && a.isInputEnabled == before.2, c.label)
        }
    }

    @Test("CivilDate: day numbers round-trip and agree with Foundation's calendar (300 cases)")
    func civilDates() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0) ?? riyadh
        try forAll(cases: 300) { rng, c in
            let n = rng.int(-130_000...200_000)  // 1614…2517: Foundation's calendar is Julian before 1582
            let d = CivilDate(dayNumber: n)
            #expect(d.dayNumber == n && CivilDate(iso: d.description) == d || d.year > 9999 || d.year < 0, c.label)
            let instant = Date(timeIntervalSince1970: Double(n) * 86_400 + Double(rng.int(0...86_399)))
            let parts = calendar.dateComponents([.year, .month, .day], from: instant)
            #expect(parts.year == d.year && parts.month == d.month && parts.day == d.day, c.label)
            let local = CivilDate.today(instant, in: riyadh)
            let offset = try referenceDays(from: instant, to: local)
            #expect(offset == 0, c.label)
        }
        #expect(
            CivilDate(iso: "2027-02-29") == nil && CivilDate(iso: "2028-02-29") != nil
                && CivilDate(iso: "2027-1-06") == nil)
    }
}

@Suite("Grounded replies")
struct GroundingTests {
    static func alert(_ rng: inout SeededGenerator) -> ProactiveAlert {
        let doc = UserDocument(
            id: "d", type: rng.pick(DocumentType.allCases),
            number: rng.bool() ? rng.string(from: Alphabet.digits, length: 6...10) : nil,
            expiryDate: CivilDate(dayNumber: rng.int(20_000...22_000)),
            renewalFeeSAR: rng.bool() ? rng.int(0...900) : nil)
        return ProactiveAlert(
            id: doc.id, serviceType: doc.type.renewalService, document: doc, daysRemaining: rng.int(0...120))
    }

    static let filler = ["يرجى", "التجديد", "الآن", "عبر", "أبشر", "شكراً", "لك", "من", "فضلك"]

    @Test(
        "text naming the document and the days passes; text missing either, adding a number or not in Arabic fails (300 cases)"
    )
    func check() {
        forAll(cases: 300) { rng, c in
            let alert = Self.alert(&rng)
            let reply = AlertReply.grounded(for: alert, userText: "x")
            let wording = rng.pick(alert.serviceType.documentWordings)
            let days =
                rng.bool()
                ? "\(alert.daysRemaining)"
                : String(String(alert.daysRemaining).map { Alphabet.arabicDigits[Int(String($0)) ?? 0] })
            let daysPhrase = "باقي \(days) \(rng.pick(["يوم", "يوماً", "أيام"]))"
            var words = (0..<rng.int(0...6)).map { _ in rng.pick(Self.filler) }
            words.insert(wording, at: rng.int(0...words.count))
            words.insert(daysPhrase, at: rng.int(0...words.count))
            let good = words.joined(separator: " ")
            #expect(
                GroundingCheck.verify(good, against: reply, wording: AbsherSettings.wording).isVerified, "\(c): \(good)"
            )
            let noDays = words.filter { $0 != daysPhrase }.joined(separator: " ")
            #expect(
                !GroundingCheck.verify(noDays, against: reply, wording: AbsherSettings.wording).isVerified,
                "\(c): \(noDays)")
            let noTitle = words.filter { $0 != wording }.joined(separator: " ")
            #expect(
                !GroundingCheck.verify(noTitle, against: reply, wording: AbsherSettings.wording).isVerified,
                "\(c): \(noTitle)")
            let stranger = good + " و\(alert.daysRemaining + 1000 + rng.int(1...50)) ريال"
            #expect(
                !GroundingCheck.verify(stranger, against: reply, wording: AbsherSettings.wording).isVerified,
                "\(c): \(stranger)")
            let english = good + " " + String(repeating: "please renew your licence now ", count: 4)
            #expect(
                !GroundingCheck.verify(english, against: reply, wording: AbsherSettings.wording).isVerified,
                "\(c): \(english)")
            // The template sentence always passes its own check.
            #expect(
                GroundingCheck.verify(reply.fallback, against: reply, wording: AbsherSettings.wording).isVerified,
                "\(c): \(reply.fallback)")
            // A rewording that adds claims of its own fails, though it states the facts and no foreign number.
            let claims = good + " والرسوم تختلف حسب المنطقة وسعر السوق الحالي"
            #expect(
                !GroundingCheck.verify(claims, against: reply, wording: AbsherSettings.wording).isVerified, "\(claims)")
        }
    }

    @Test("the prompt carries the facts and the reply carries the alert's link")
    func prompt() throws {
        var rng = SeededGenerator(seed: 7)
        let alert = Self.alert(&rng)
        let reply = AlertReply.grounded(for: alert, userText: "chip")
        let system = try #require(reply.messages.first)
        #expect(
            system.role == .system && system.content.contains(alert.title)
                && system.content.contains("\(alert.daysRemaining)"))
        #expect(reply.messages.last == .user("chip") && reply.deepLink == alert.deepLink && reply.requireArabic)
    }
}
