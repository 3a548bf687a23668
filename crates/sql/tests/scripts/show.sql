# The SHOW forms Strata reads itself: each keeps the rows its LIKE (first column) or WHERE
# (columns by the names the SHOW gives them) holds, as MySQL does.
> CREATE DATABASE shows
ok 1
> USE shows
ok 0
> CREATE TABLE items (id INT PRIMARY KEY, k INT NOT NULL, name VARCHAR(10), KEY k_name (k, name), UNIQUE KEY u_name (name))
ok 0
> CREATE TABLE other (id INT PRIMARY KEY)
ok 0
> SHOW INDEX FROM items
Table	Non_unique	Key_name	Seq_in_index	Column_name	Collation	Cardinality	Sub_part	Packed	Null	Index_type	Comment	Index_comment	Visible
items	0	PRIMARY	1	id	A	0	NULL	NULL		BTREE			YES
items	1	k_name	1	k	A	0	NULL	NULL		BTREE			YES
items	1	k_name	2	name	A	0	NULL	NULL	YES	BTREE			YES
items	0	u_name	1	name	A	0	NULL	NULL	YES	BTREE			YES
> SHOW INDEX FROM items WHERE Key_name = 'k_name'
Table	Non_unique	Key_name	Seq_in_index	Column_name	Collation	Cardinality	Sub_part	Packed	Null	Index_type	Comment	Index_comment	Visible
items	1	k_name	1	k	A	0	NULL	NULL		BTREE			YES
items	1	k_name	2	name	A	0	NULL	NULL	YES	BTREE			YES
> SHOW KEYS IN items FROM shows WHERE Non_unique = 0
Table	Non_unique	Key_name	Seq_in_index	Column_name	Collation	Cardinality	Sub_part	Packed	Null	Index_type	Comment	Index_comment	Visible
items	0	PRIMARY	1	id	A	0	NULL	NULL		BTREE			YES
items	0	u_name	1	name	A	0	NULL	NULL	YES	BTREE			YES
> SHOW INDEXES FROM shows.other
Table	Non_unique	Key_name	Seq_in_index	Column_name	Collation	Cardinality	Sub_part	Packed	Null	Index_type	Comment	Index_comment	Visible
other	0	PRIMARY	1	id	A	0	NULL	NULL		BTREE			YES
> SHOW INDEX FROM missing
error 1146 (42S02): Table 'shows.missing' doesn't exist
> SHOW TABLE STATUS LIKE 'it%'
Name	Engine	Version	Row_format	Rows	Avg_row_length	Data_length	Max_data_length	Index_length	Data_free	Auto_increment	Create_time	Update_time	Check_time	Collation	Checksum	Create_options	Comment
items	InnoDB	10	Dynamic	0	0	0	0	0	0	NULL	NULL	NULL	NULL	utf8mb4_bin	NULL		
> SHOW TABLE STATUS FROM shows WHERE Name = 'other'
Name	Engine	Version	Row_format	Rows	Avg_row_length	Data_length	Max_data_length	Index_length	Data_free	Auto_increment	Create_time	Update_time	Check_time	Collation	Checksum	Create_options	Comment
other	InnoDB	10	Dynamic	0	0	0	0	0	0	NULL	NULL	NULL	NULL	utf8mb4_bin	NULL		
> SHOW COLLATION LIKE 'utf8mb4_bin'
Collation	Charset	Id	Default	Compiled	Sortlen
utf8mb4_bin	utf8mb4	46	Yes	Yes	1
> SHOW COLLATION WHERE Collation = 'binary'
Collation	Charset	Id	Default	Compiled	Sortlen
> SHOW CHARACTER SET LIKE 'utf8%'
Charset	Description	Default collation	Maxlen
utf8mb4	UTF-8 Unicode	utf8mb4_bin	4
> SHOW CHARSET WHERE Charset = 'latin1'
Charset	Description	Default collation	Maxlen
> SHOW STATUS LIKE 'Com_s%'
Variable_name	Value
Com_select	0
Com_set_option	0
> SHOW GLOBAL STATUS WHERE Variable_name = 'Uptime' AND Value < 0
Variable_name	Value
> SHOW STORAGE ENGINES
Engine	Support	Comment	Transactions	XA	Savepoints
InnoDB	DEFAULT	Strata's transactional storage	YES	NO	YES
> SHOW WARNINGS
Level	Code	Message
> SHOW CREATE DATABASE shows
Database	Create Database
shows	CREATE DATABASE `shows` /*!40100 DEFAULT CHARACTER SET utf8mb4 */
> SHOW CREATE SCHEMA nowhere
error 1049 (42000): Unknown database 'nowhere'
> ANALYZE TABLE items, shows.other
Table	Op	Msg_type	Msg_text
shows.items	analyze	status	OK
shows.other	analyze	status	OK
> OPTIMIZE LOCAL TABLE items
Table	Op	Msg_type	Msg_text
shows.items	optimize	note	Table does not support optimize, doing analyze instead
shows.items	optimize	status	OK
> ANALYZE TABLE missing
Table	Op	Msg_type	Msg_text
shows.missing	analyze	Error	Table 'shows.missing' doesn't exist
shows.missing	analyze	status	Operation failed
> DO 1 + 1, @x := 5
ok 0
> SELECT @x
@x
5
> START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY
ok 0
> SELECT COUNT(*) FROM items
COUNT(*)
0
> COMMIT
ok 0

# information_schema.PROCESSLIST lists what SHOW FULL PROCESSLIST lists.
> SELECT ID = CONNECTION_ID() AS me, USER, DB, COMMAND, STATE, INFO FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()
me	USER	DB	COMMAND	STATE	INFO
1	root	shows	Query	executing	SELECT ID = CONNECTION_ID() AS me, USER, DB, COMMAND, STATE, INFO FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()
@session other
> SELECT 1
1
1
@session a
> SELECT COMMAND, STATE, COUNT(*) FROM information_schema.processlist GROUP BY COMMAND, STATE ORDER BY COMMAND
COMMAND	STATE	COUNT(*)
Query	executing	1
Sleep		1
> CREATE VIEW sessions AS SELECT ID, INFO FROM information_schema.PROCESSLIST
ok 0
> SELECT COUNT(*) FROM sessions WHERE INFO LIKE '%FROM sessions%'
COUNT(*)
1
# information_schema.STATEMENTS_SUMMARY groups statements by digest, schema and user: literals,
# spacing, case and lists of any length make one group; failed runs count as errors.
> INSERT INTO other VALUES (1), (2), (3)
ok 3
> SELECT id FROM other WHERE id IN (1, 2)
id
1
2
> select id  from other where id in (3,4,5,6) -- again
id
3
> SELECT nope FROM other WHERE id = 1
error 1054 (42S22): Unknown column 'nope' in 'field list'
> SELECT nope FROM other WHERE id = 2
error 1054 (42S22): Unknown column 'nope' in 'field list'
> SELECT STMT_TYPE, SCHEMA_NAME, DIGEST_TEXT, SAMPLE_USER, EXEC_COUNT, SUM_ERRORS, SUM_RESULT_ROWS, MAX_RESULT_ROWS, LENGTH(DIGEST), QUERY_SAMPLE_TEXT FROM information_schema.STATEMENTS_SUMMARY WHERE DIGEST_TEXT LIKE '%from other%' ORDER BY DIGEST_TEXT
STMT_TYPE	SCHEMA_NAME	DIGEST_TEXT	SAMPLE_USER	EXEC_COUNT	SUM_ERRORS	SUM_RESULT_ROWS	MAX_RESULT_ROWS	LENGTH(DIGEST)	QUERY_SAMPLE_TEXT
Select	shows	select id from other where id in (...)	root	2	0	3	2	64	SELECT id FROM other WHERE id IN (1, 2)
Select	shows	select nope from other where id = ?	root	2	2	0	0	64	SELECT nope FROM other WHERE id = 1
> SELECT DIGEST_TEXT, AVG_AFFECTED_ROWS, SUM_LATENCY >= MAX_LATENCY, MAX_LATENCY >= MIN_LATENCY, FIRST_SEEN <= LAST_SEEN FROM information_schema.STATEMENTS_SUMMARY_HISTORY WHERE STMT_TYPE = 'Insert' AND SCHEMA_NAME = 'shows'
DIGEST_TEXT	AVG_AFFECTED_ROWS	SUM_LATENCY >= MAX_LATENCY	MAX_LATENCY >= MIN_LATENCY	FIRST_SEEN <= LAST_SEEN
insert into other values (...)	3	1	1	1
> SET tidb_enable_stmt_summary = OFF
error 1229 (HY000): Variable 'tidb_enable_stmt_summary' is a GLOBAL variable and should be set with SET GLOBAL
# TiDB's SHOW TABLE … REGIONS and the placement tables: the embedded store is one region over
# every key, led by its only peer on store 1.
> SHOW TABLE items REGIONS
REGION_ID	START_KEY	END_KEY	LEADER_ID	LEADER_STORE_ID	PEERS	SCATTERING	WRITTEN_BYTES	READ_BYTES	APPROXIMATE_SIZE(MB)	APPROXIMATE_KEYS
1			1	1	1	0	NULL	NULL	NULL	NULL
> SHOW TABLE shows.items INDEX k_name REGIONS WHERE LEADER_STORE_ID = 1
REGION_ID	START_KEY	END_KEY	LEADER_ID	LEADER_STORE_ID	PEERS	SCATTERING	WRITTEN_BYTES	READ_BYTES	APPROXIMATE_SIZE(MB)	APPROXIMATE_KEYS
1			1	1	1	0	NULL	NULL	NULL	NULL
> SHOW TABLE items INDEX nope REGIONS
error 1176 (42000): Key 'nope' doesn't exist in table 'items'
> SHOW TABLE missing REGIONS
error 1146 (42S02): Table 'shows.missing' doesn't exist
> SELECT TABLE_NAME, IS_INDEX, INDEX_NAME, LEADER_STORE_ID FROM information_schema.TIKV_REGION_STATUS WHERE DB_NAME = 'shows' ORDER BY TABLE_NAME, INDEX_NAME
TABLE_NAME	IS_INDEX	INDEX_NAME	LEADER_STORE_ID
items	0	NULL	1
items	1	k_name	1
items	1	u_name	1
other	0	NULL	1
> SELECT STORE_ID, ADDRESS, STORE_STATE_NAME, LEADER_COUNT, REGION_COUNT FROM information_schema.TIKV_STORE_STATUS
STORE_ID	ADDRESS	STORE_STATE_NAME	LEADER_COUNT	REGION_COUNT
1	embedded	Up	1	1
# Binary strings keep their types: SHOW CREATE TABLE and information_schema name them as MySQL.
> CREATE TABLE bytes (id INT PRIMARY KEY, b BINARY(4), vb VARBINARY(16), tb TINYBLOB, bl BLOB, mb MEDIUMBLOB, lb LONGBLOB, tx TEXT)
ok 0
> SHOW CREATE TABLE bytes
Table	Create Table
bytes	CREATE TABLE `bytes` (
  `id` int NOT NULL,
  `b` binary(4) DEFAULT NULL,
  `vb` varbinary(16) DEFAULT NULL,
  `tb` tinyblob DEFAULT NULL,
  `bl` blob DEFAULT NULL,
  `mb` mediumblob DEFAULT NULL,
  `lb` longblob DEFAULT NULL,
  `tx` text DEFAULT NULL,
  PRIMARY KEY (`id`) /*T![clustered_index] CLUSTERED */
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
> SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'shows' AND TABLE_NAME = 'bytes' ORDER BY ORDINAL_POSITION
COLUMN_NAME	DATA_TYPE	COLUMN_TYPE
id	int	int
b	binary	binary(4)
vb	varbinary	varbinary(16)
tb	tinyblob	tinyblob
bl	blob	blob
mb	mediumblob	mediumblob
lb	longblob	longblob
tx	text	text
> INSERT INTO bytes VALUES (1, X'00010203', X'FF00', X'BEEF', 'abc', NULL, NULL, 'text')
ok 1
> SELECT HEX(b), HEX(vb), HEX(tb), bl, tx FROM bytes
HEX(b)	HEX(vb)	HEX(tb)	bl	tx
00010203	FF00	BEEF	abc	text
