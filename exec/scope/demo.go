package scope

import (
	"os"
	"path/filepath"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/internal/atomicfile"
)

// Demo scope contents. They are fixed text so a demo home is the same on
// every machine and every run.
var demoMaildir = map[string]string{
	"cur/1717236000.M1P100.demo:2,S": "From: Ada Lovelace <ada@example.org>\r\n" +
		"To: Operator <op@example.org>\r\n" +
		"Subject: Quarterly report draft\r\n" +
		"Date: Sat, 01 Jun 2024 10:00:00 +0000\r\n" +
		"Message-ID: <q2-report@example.org>\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n\r\n" +
		"Hi,\r\n\r\nThe quarterly report draft is in the shared folder. The budget table\r\nstill needs the kitchen renovation numbers.\r\n\r\nAda\r\n",
	"cur/1717322400.M2P100.demo:2,RS": "From: =?UTF-8?Q?Jos=C3=A9_N=C3=BA=C3=B1ez?= <jose@example.org>\r\n" +
		"To: Operator <op@example.org>\r\n" +
		"Subject: =?UTF-8?Q?Caf=C3=A9_order_for_Friday?=\r\n" +
		"Date: Sun, 02 Jun 2024 12:00:00 +0200\r\n" +
		"Message-ID: <cafe@example.org>\r\n" +
		"Content-Type: text/plain; charset=iso-8859-1\r\n" +
		"Content-Transfer-Encoding: quoted-printable\r\n\r\n" +
		"Two caf=E9s au lait and a cr=E8me br=FBl=E9e for the budget meeting, please.\r\n",
	"new/1717408800.M3P100.demo": "From: Build Bot <ci@example.org>\r\n" +
		"To: Operator <op@example.org>\r\n" +
		"Subject: Nightly build passed\r\n" +
		"Date: Mon, 03 Jun 2024 10:00:00 +0000\r\n" +
		"Message-ID: <nightly-42@example.org>\r\n" +
		"MIME-Version: 1.0\r\n" +
		"Content-Type: multipart/alternative; boundary=\"b1\"\r\n\r\n" +
		"--b1\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
		"TmlnaHRseSBidWlsZCA0MiBwYXNzZWQ6IDEyMyB0ZXN0cywgMCBmYWlsdXJlcy4K\r\n" +
		"--b1\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>Nightly build 42 passed</p>\r\n--b1--\r\n",
}

const demoMbox = "From ada@example.org Mon Jan  1 09:00:00 2024\n" +
	"From: Ada Lovelace <ada@example.org>\n" +
	"To: Operator <op@example.org>\n" +
	"Subject: Welcome to the archive\n" +
	"Date: Mon, 01 Jan 2024 09:00:00 +0000\n" +
	"Message-ID: <welcome@example.org>\n\n" +
	"This mbox holds older mail.\n" +
	">From the archive you can open any message with enter.\n\n" +
	"From grace@example.org Tue Jan  2 15:30:00 2024\n" +
	"From: Grace Hopper <grace@example.org>\n" +
	"To: Operator <op@example.org>\n" +
	"Subject: Budget meeting moved\n" +
	"Date: Tue, 02 Jan 2024 15:30:00 +0000\n" +
	"Message-ID: <budget-moved@example.org>\n\n" +
	"The budget meeting moved to Thursday at 10:00.\n\n" +
	"From linus@example.org Wed Jan  3 08:15:00 2024\n" +
	"From: Linus <linus@example.org>\n" +
	"To: Operator <op@example.org>\n" +
	"Subject: Notes without a Date header\n\n" +
	"This message has no Date header; its time comes from the From_ line.\n"

const demoCSV = "id,name,email,city,note\n" +
	"3,Grace Hopper,grace@example.org,Arlington,\"Compiler pioneer, \"\"debugging\"\" fame\"\n" +
	"1,Ada Lovelace,ada@example.org,London,First program\n" +
	"10,José Núñez,jose@example.org,Málaga,Orders the café for the budget meeting\n" +
	"2,Linus,linus@example.org,Portland,\"Kernel\nand git\"\n"

// WriteDemo writes a small Maildir (Mail/INBOX), an mbox (Mail/archive.mbox)
// and a CSV dataset (contacts.csv) under dir and returns scopes for them,
// with absolute paths: "mail", "archive" and "contacts".
func WriteDemo(dir string) ([]config.ScopeConfig, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	inbox := filepath.Join(abs, "Mail", "INBOX")
	for _, sub := range []string{"cur", "new", "tmp"} {
		if err := os.MkdirAll(filepath.Join(inbox, sub), 0o755); err != nil {
			return nil, err
		}
	}
	for name, body := range demoMaildir {
		if err := atomicfile.Write(filepath.Join(inbox, filepath.FromSlash(name)), []byte(body), 0o644); err != nil {
			return nil, err
		}
	}
	mbox := filepath.Join(abs, "Mail", "archive.mbox")
	if err := atomicfile.Write(mbox, []byte(demoMbox), 0o644); err != nil {
		return nil, err
	}
	csvPath := filepath.Join(abs, "contacts.csv")
	if err := atomicfile.Write(csvPath, []byte(demoCSV), 0o644); err != nil {
		return nil, err
	}
	return []config.ScopeConfig{
		{Name: "mail", Kind: KindEmails, Path: inbox},
		{Name: "archive", Kind: KindEmails, Path: mbox},
		{Name: "contacts", Kind: KindDataset, Path: csvPath, PrimaryKey: "id"},
	}, nil
}
