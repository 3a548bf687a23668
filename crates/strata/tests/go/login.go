// Logs in to a MySQL server with go-sql-driver/mysql (Debian's golang-github-go-sql-driver-mysql-dev)
// as each account given and prints what the server says about the session.
//
// Usage: login CERT ADDRESS USER:PASSWORD:TLS...   (TLS is "plain" or "verified": the
// certificate in CERT, checked for 127.0.0.1).
package main

import (
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"fmt"
	"os"
	"strings"

	"github.com/go-sql-driver/mysql"
)

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: login CERT ADDRESS USER:PASSWORD:TLS...")
		os.Exit(2)
	}
	pem, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		fail(fmt.Errorf("no certificate in %s", os.Args[1]))
	}
	if err := mysql.RegisterTLSConfig("verified", &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"}); err != nil {
		fail(err)
	}
	for _, account := range os.Args[3:] {
		parts := strings.SplitN(account, ":", 3)
		tlsMode := "false"
		if parts[2] == "verified" {
			tlsMode = "verified"
		}
		dsn := fmt.Sprintf("%s:%s@tcp(%s)/?tls=%s&timeout=10s", parts[0], parts[1], os.Args[2], tlsMode)
		fmt.Println(login(dsn))
	}
}

// login opens a connection, runs a text and a prepared statement, and describes the session.
func login(dsn string) string {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return "error: " + err.Error()
	}
	defer db.Close()
	var user string
	if err := db.QueryRow("SELECT CURRENT_USER()").Scan(&user); err != nil {
		return "error: " + err.Error()
	}
	var sum int64
	if err := db.QueryRow("SELECT ? + 1", 41).Scan(&sum); err != nil {
		return "error: " + err.Error()
	}
	var name, version string
	if err := db.QueryRow("SHOW STATUS LIKE 'Ssl_version'").Scan(&name, &version); err != nil {
		return "error: " + err.Error()
	}
	if version == "" {
		version = "plain"
	}
	return fmt.Sprintf("%s %d %s", user, sum, version)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
