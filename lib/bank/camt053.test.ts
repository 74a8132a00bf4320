import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { MAX_NODE_CHARS, readCamt053 } from "@/lib/bank/camt053";
import { aCamt053, camtEntry } from "@/lib/bank/statement-builders";
import { emptyMeta, StatementError, type StatementLine } from "@/lib/bank/statement-line";

async function read(input: string | Buffer | AsyncIterable<Buffer | string>) {
  const meta = emptyMeta();
  const lines: StatementLine[] = [];
  const source = typeof input === "string" || Buffer.isBuffer(input) ? Readable.from([Buffer.from(input)]) : input;
  for await (const l of readCamt053(source, meta)) lines.push(l);
  return { lines, meta };
}

async function refusal(input: string | Buffer | AsyncIterable<Buffer | string>): Promise<string> {
  try {
    await read(input);
  } catch (error) {
    if (error instanceof StatementError) return error.message;
    throw error;
  }
  throw new Error("the file was not refused");
}

// A statement as a German bank sends it (camt.053.001.02): a Stripe payout
// credited with its reference split over two Ustrd lines, a card fee debited,
// a pending credit, the reversal of a direct debit, and a JPY credit.
const v02 = `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <BkToCstmrStmt>
    <GrpHdr><MsgId>STMT20261203</MsgId><CreDtTm>2026-12-04T05:12:00</CreDtTm></GrpHdr>
    <Stmt>
      <Id>2026-12-03-001</Id>
      <ElctrncSeqNb>241</ElctrncSeqNb>
      <CreDtTm>2026-12-04T05:12:00</CreDtTm>
      <FrToDt><FrDtTm>2026-12-01T00:00:00</FrDtTm><ToDtTm>2026-12-03T23:59:59</ToDtTm></FrToDt>
      <Acct><Id><IBAN>DE89370400440532013000</IBAN></Id><Ccy>EUR</Ccy><Ownr><Nm>Tally Test GmbH</Nm></Ownr></Acct>
      <Bal><Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">10000.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-12-01</Dt></Dt></Bal>
      <Ntry>
        <NtryRef>N-1</NtryRef>
        <Amt Ccy="EUR">1234567.89</Amt>
        <CdtDbtInd>CRDT</CdtDbtInd>
        <Sts>BOOK</Sts>
        <BookgDt><Dt>2026-12-02</Dt></BookgDt>
        <ValDt><Dt>2026-12-03</Dt></ValDt>
        <AcctSvcrRef>2026120200451</AcctSvcrRef>
        <BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>RCDT</Cd><SubFmlyCd>ESCT</SubFmlyCd></Fmly></Domn></BkTxCd>
        <NtryDtls><TxDtls>
          <Refs><AcctSvcrRef>TX-999</AcctSvcrRef><EndToEndId>NOTPROVIDED</EndToEndId></Refs>
          <AmtDtls><TxAmt><Amt Ccy="USD">1.00</Amt></TxAmt></AmtDtls>
          <RltdPties><Dbtr><Nm>STRIPE PAYMENTS EUROPE LTD</Nm></Dbtr><Cdtr><Nm>Tally Test GmbH</Nm></Cdtr></RltdPties>
          <RmtInf><Ustrd>STRIPE PAYOUT</Ustrd><Ustrd>PO_1QZXDEMO4EUR</Ustrd></RmtInf>
        </TxDtls></NtryDtls>
        <AddtlNtryInf>GUTSCHRIFT</AddtlNtryInf>
      </Ntry>
      <Ntry>
        <Amt Ccy="EUR">2.50</Amt>
        <CdtDbtInd>DBIT</CdtDbtInd>
        <Sts>BOOK</Sts>
        <BookgDt><Dt>2026-12-02</Dt></BookgDt>
        <NtryRef>FEE-7</NtryRef>
        <NtryDtls><TxDtls><RltdPties><Cdtr><Nm>Hausbank AG</Nm></Cdtr></RltdPties></TxDtls></NtryDtls>
      </Ntry>
      <Ntry>
        <Amt Ccy="EUR">50.00</Amt>
        <CdtDbtInd>CRDT</CdtDbtInd>
        <Sts>PDNG</Sts>
        <BookgDt><Dt>2026-12-03</Dt></BookgDt>
      </Ntry>
      <Ntry>
        <Amt Ccy="EUR">19.99</Amt>
        <CdtDbtInd>CRDT</CdtDbtInd>
        <RvslInd>true</RvslInd>
        <Sts>BOOK</Sts>
        <BookgDt><Dt>2026-12-03</Dt></BookgDt>
        <AcctSvcrRef>R-1</AcctSvcrRef>
        <NtryDtls><TxDtls><RmtInf><Ustrd>RUECKLASTSCHRIFT</Ustrd></RmtInf></TxDtls></NtryDtls>
      </Ntry>
      <Ntry>
        <Amt Ccy="JPY">1500</Amt>
        <CdtDbtInd>CRDT</CdtDbtInd>
        <Sts>BOOK</Sts>
        <BookgDt><Dt>2026-12-03</Dt></BookgDt>
      </Ntry>
    </Stmt>
  </BkToCstmrStmt>
</Document>
`;

// camt.053.001.08 as a Dutch bank writes it: a namespace prefix, <Sts><Cd>, booking
// as DtTm, the debtor under Pty, an account without IBAN, a 3-decimal currency, and
// supplementary data in another namespace holding an <Ntry> that is not one.
const v08 = `<?xml version="1.0" encoding="utf-8"?>
<c:Document xmlns:c="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08" xmlns:x="urn:example:bank">
 <c:BkToCstmrStmt>
  <c:GrpHdr><c:MsgId>M8</c:MsgId><c:CreDtTm>2026-12-04T05:00:00+01:00</c:CreDtTm></c:GrpHdr>
  <c:Stmt>
   <c:Id>S8</c:Id>
   <c:Acct><c:Id><c:Othr><c:Id>0417164300</c:Id></c:Othr></c:Id></c:Acct>
   <c:Ntry>
    <c:Amt Ccy="KWD">1.234</c:Amt>
    <c:CdtDbtInd>CRDT</c:CdtDbtInd>
    <c:Sts><c:Cd>BOOK</c:Cd></c:Sts>
    <c:BookgDt><c:DtTm>2026-12-05T23:30:00+01:00</c:DtTm></c:BookgDt>
    <c:ValDt><c:DtTm>2026-12-06T00:00:00Z</c:DtTm></c:ValDt>
    <c:NtryDtls><c:TxDtls>
     <c:RltdPties><c:Dbtr><c:Pty><c:Nm>Adyen N.V.</c:Nm></c:Pty></c:Dbtr></c:RltdPties>
     <c:RmtInf><c:Ustrd>ADYEN PAYOUT</c:Ustrd><c:Ustrd>batch 4411</c:Ustrd></c:RmtInf>
    </c:TxDtls><c:TxDtls>
     <c:RmtInf><c:Strd><c:CdtrRefInf><c:Ref>RF18539007547034</c:Ref></c:CdtrRefInf></c:Strd></c:RmtInf>
    </c:TxDtls></c:NtryDtls>
    <c:SplmtryData><c:Envlp><x:Ntry><x:Amt Ccy="EUR">1000000.00</x:Amt></x:Ntry></c:Envlp></c:SplmtryData>
   </c:Ntry>
   <c:Ntry>
    <c:Amt Ccy="KWD">0.500</c:Amt>
    <c:CdtDbtInd>DBIT</c:CdtDbtInd>
    <c:Sts><c:Cd>INFO</c:Cd></c:Sts>
   </c:Ntry>
  </c:Stmt>
 </c:BkToCstmrStmt>
</c:Document>`;

describe("reading camt.053", () => {
  it("reads a 001.02 statement: booked entries in signed minor units, every remittance text, pending ones counted", async () => {
    const { lines, meta } = await read(v02);
    expect(lines).toEqual([
      {
        row: 1,
        account: "DE89370400440532013000",
        entryRef: "2026120200451",
        bookingDate: "2026-12-02",
        valueDate: "2026-12-03",
        amount: 123456789n,
        currency: "EUR",
        remittance: "STRIPE PAYOUT PO_1QZXDEMO4EUR GUTSCHRIFT",
        counterparty: "STRIPE PAYMENTS EUROPE LTD",
        reversal: false,
      },
      {
        row: 2,
        account: "DE89370400440532013000",
        entryRef: "FEE-7",
        bookingDate: "2026-12-02",
        valueDate: null,
        amount: -250n,
        currency: "EUR",
        remittance: "",
        counterparty: "Hausbank AG",
        reversal: false,
      },
      expect.objectContaining({
        row: 4,
        amount: 1999n,
        reversal: true,
        entryRef: "R-1",
        remittance: "RUECKLASTSCHRIFT",
      }),
      expect.objectContaining({ row: 5, amount: 1500n, currency: "JPY", entryRef: null, counterparty: null }),
    ]);
    expect(meta).toEqual({
      accounts: ["DE89370400440532013000"],
      currencies: ["EUR", "JPY"],
      from: "2026-12-01",
      to: "2026-12-03",
      skipped: { PDNG: 1 },
    });
  });

  it("reads a 001.08 statement with a namespace prefix, <Sts><Cd>, DtTm dates, Pty names and an Othr account", async () => {
    const { lines, meta } = await read(v08);
    expect(lines).toEqual([
      {
        row: 1,
        account: "0417164300",
        entryRef: null,
        bookingDate: "2026-12-05",
        valueDate: "2026-12-06",
        amount: 1234n,
        currency: "KWD",
        remittance: "ADYEN PAYOUT batch 4411 RF18539007547034",
        counterparty: "Adyen N.V.",
        reversal: false,
      },
    ]);
    // No FrToDt: the statement covers the days it booked.
    expect(meta).toMatchObject({ from: "2026-12-05", to: "2026-12-05", skipped: { INFO: 1 } });
  });

  it("reads any camt.053.001.NN the same, and the same bytes in any chunking (a UTF-8 character split between chunks)", async () => {
    const entries = [
      { amount: 4200n, remittance: ["Zahlung für Bestellung № 7 – po_split"], counterparty: "Müller & Söhne" },
    ];
    const whole = await read(aCamt053({ version: "08", entries }));
    const bytes = Buffer.from(aCamt053({ version: "08", entries }));
    async function* byteByByte() {
      for (let i = 0; i < bytes.length; i += 7) yield bytes.subarray(i, i + 7);
    }
    expect((await read(byteByByte())).lines).toEqual(whole.lines);
    expect(whole.lines[0]).toMatchObject({
      remittance: "Zahlung für Bestellung № 7 – po_split",
      counterparty: "Müller & Söhne",
    });
    const v13 = aCamt053({ entries }).replace("camt.053.001.02", "camt.053.001.13");
    expect((await read(v13)).lines).toHaveLength(1);
  });
});

describe("refusing what is not a camt.053 statement, naming where", () => {
  it("refuses a DOCTYPE, with or without entities, before any entity could expand", async () => {
    const laughs = `<?xml version="1.0"?>
<!DOCTYPE Document [
  <!ENTITY lol "lol">
  <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt>&lol3;</BkToCstmrStmt></Document>`;
    expect(await refusal(laughs)).toMatch(/^line 6, column \d+: a DOCTYPE is not allowed/);
    const external = `<?xml version="1.0"?><!DOCTYPE Document SYSTEM "file:///etc/passwd"><Document/>`;
    expect(await refusal(external)).toMatch(/a DOCTYPE is not allowed/);
    // An entity never declared is not expanded either: it is malformed XML.
    expect(
      await refusal(aCamt053({ entries: [{ amount: 100n, remittance: ["&xxe;"] }] }).replace("&amp;xxe;", "&xxe;")),
    ).toMatch(/not well-formed XML: undefined entity/);
  });

  it("refuses a 50 MB text node after a megabyte, without holding it", async () => {
    const head = aCamt053({ entries: [{ amount: 100n }] }).split("<Ntry>")[0]!;
    const piece = "A".repeat(1 << 20);
    let sent = 0;
    async function* huge() {
      yield `${head}<Ntry><AddtlNtryInf>`;
      for (let i = 0; i < 50; i++) {
        sent += piece.length;
        yield piece;
      }
      yield "</AddtlNtryInf></Ntry></Stmt></BkToCstmrStmt></Document>";
    }
    const before = process.memoryUsage().heapUsed;
    const message = await refusal(huge());
    expect(message).toMatch(
      new RegExp(`more than ${MAX_NODE_CHARS} characters (of text in one element|without an element ending)`),
    );
    expect(message).toMatch(/AddtlNtryInf/);
    expect(sent).toBeLessThanOrEqual(3 << 20);
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(40 << 20);
  });

  it("refuses the same node handed over as one 50 MB buffer as early: the reader cuts what it is given", async () => {
    const head = aCamt053({ entries: [{ amount: 100n }] }).split("<Ntry>")[0]!;
    const one = Buffer.alloc(50 << 20, 0x41);
    // The process's high-water mark: decoding the buffer whole and handing it to saxes would add 100 MB to it.
    const before = process.resourceUsage().maxRSS;
    expect(await refusal(Readable.from([Buffer.from(`${head}<Ntry><AddtlNtryInf>`), one]))).toMatch(
      /more than 1048576/,
    );
    expect((process.resourceUsage().maxRSS - before) * 1024).toBeLessThan(30 << 20);
  });

  it("refuses malformed XML with its line", async () => {
    const broken = aCamt053({ entries: [{ amount: 100n }, { amount: 200n }] }).replace("</CdtDbtInd>", "</CdtDbt>");
    expect(await refusal(broken)).toMatch(/^line \d+, column \d+: not well-formed XML: unexpected close tag/);
    const cut = aCamt053({ entries: [{ amount: 100n }] }).slice(0, -30);
    expect(await refusal(cut)).toMatch(/not well-formed XML/);
    expect(await refusal("")).toMatch(/not well-formed XML|empty/);
  });

  it("refuses an amount that is not a decimal of its currency's exponent, naming the entry", async () => {
    const bad = async (amount: string, currency: string | null = "EUR") =>
      refusal(aCamt053({ entries: [{ amount: 100n }, { amount, currency }] }));
    expect(await bad("10.505")).toMatch(
      /\(<Amt> of entry 2\): 10.505 EUR has more than 2 decimal places; refusing to round money/,
    );
    expect(await bad("12,50")).toMatch(/<Amt> of entry 2.*"12,50" is not an amount/);
    expect(await bad("-5.00")).toMatch(/never negative: CdtDbtInd gives the direction/);
    expect(await bad("1e3")).toMatch(/"1e3" is not an amount/);
    expect(await bad("")).toMatch(/"" is not an amount/);
    expect(await bad("12.5", "JPY")).toMatch(/12.5 JPY has more than 0 decimal places/);
    expect(await bad("99999999999999.99")).toMatch(/beyond the largest amount/);
    expect(await bad("10.00", null)).toMatch(
      /<Amt> of entry 2\): the amount has no Ccy attribute: its currency is missing/,
    );
    expect(await bad("10.00", "XYZ")).toMatch(/Ccy "XYZ" is not an ISO 4217 currency code/);
    const noDate = await refusal(aCamt053({ entries: [{ amount: 100n, bookingDate: null }] }));
    expect(noDate).toMatch(/entry 1\): a booked entry has no <BookgDt>/);
    const badDate = await refusal(aCamt053({ entries: [{ amount: 100n, bookingDate: "2026-02-30" }] }));
    expect(badDate).toMatch(/<Dt> of entry 1\): "2026-02-30" is not a date/);
    const direction = await refusal(aCamt053({ entries: [{ amount: 100n }] }).replace(/>CRDT</g, ">CREDIT<"));
    expect(direction).toMatch(/"CREDIT" is not CRDT or DBIT/);
  });

  it("refuses a file that is not camt.053: another ISO 20022 message, another XML, a CSV, not UTF-8", async () => {
    expect(await refusal(aCamt053({ entries: [] }).replace("camt.053.001.02", "camt.052.001.08"))).toMatch(
      /this is an ISO 20022 camt.052 message .* not a camt.053 bank statement/,
    );
    expect(await refusal(`<?xml version="1.0"?><rss version="2.0"><channel/></rss>`)).toMatch(
      /line 1, column \d+ \(<rss>\): not a camt.053 bank statement: the root element is <rss> without a namespace/,
    );
    expect(
      await refusal(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrNtfctn/></Document>`),
    ).toMatch(/<Document> holds <BkToCstmrNtfctn>, not <BkToCstmrStmt>/);
    expect(await refusal("date;amount\n2026-12-01;10,00\n")).toMatch(/not well-formed XML/);
    const latin1 = Buffer.concat([
      Buffer.from(aCamt053({ entries: [{ amount: 100n, remittance: ["M"] }] }).split("<Ustrd>M")[0]!),
      Buffer.from([0x3c, 0x55, 0x73, 0x74, 0x72, 0x64, 0x3e, 0xfc]),
    ]);
    expect(await refusal(latin1)).toMatch(/not valid UTF-8/);
    expect(await refusal(aCamt053({ entries: [] }).replace('encoding="UTF-8"', 'encoding="ISO-8859-1"'))).toMatch(
      /declares encoding ISO-8859-1/,
    );
  });

  it("takes the entry's own amount and reference, never a transaction's inside it", async () => {
    const { lines } = await read(aCamt053({ entries: [{ amount: 700n, acctSvcrRef: "OWN" }] }));
    expect(lines[0]).toMatchObject({ amount: 700n, entryRef: "OWN", currency: "EUR" });
    expect(camtEntry({ amount: 700n })).toContain('<Amt Ccy="USD">999.99</Amt>');
  });
});
