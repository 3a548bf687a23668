# MySQL's operators and their precedence (the reference manual's "Operator Precedence"):
# ! ; - ~ (unary) ; ^ ; * / DIV % MOD ; + - ; << >> ; & ; | ; comparisons ; NOT ; AND && ; XOR ; OR ||
> CREATE DATABASE ops
ok 1
> USE ops
ok 0
> SELECT 5 MOD 2, 7 DIV 2 + 1, 2 + 7 DIV 2, 7 % 3 * 2, -7 MOD 3, 7.5 MOD 2
5 MOD 2	7 DIV 2 + 1	2 + 7 DIV 2	7 % 3 * 2	-7 MOD 3	7.5 MOD 2
1	4	5	2	-1	1.5
> SELECT 5 ^ 3, 2 ^ 3 * 2, -2 ^ 1, ~0, ~5, 1 << 3, 8 >> 2, 1 << 64, -1 >> 60, 1 + 1 << 2, 1 | 2 & 3, 6 & 3 | 8
5 ^ 3	2 ^ 3 * 2	-2 ^ 1	~0	~5	1 << 3	8 >> 2	1 << 64	-1 >> 60	1 + 1 << 2	1 | 2 & 3	6 & 3 | 8
6	2	18446744073709551615	18446744073709551615	18446744073709551610	8	2	0	15	8	3	10
> SELECT !1, !0 + 1, !!5, NOT 1 + 1, !NULL
!1	!0 + 1	!!5	NOT 1 + 1	!NULL
0	2	1	0	NULL
> SELECT 1 && 0, 1 || 0, 0 || NULL, 1 && NULL, 0 && NULL, 1 || NULL
1 && 0	1 || 0	0 || NULL	1 && NULL	0 && NULL	1 || NULL
0	1	NULL	NULL	0	1
> SELECT 1 = 1 XOR 2 = 2, 1 XOR 0 AND 0, 0 AND 1 OR 1, 1 XOR 1 XOR 1, 0 OR 1 XOR 1
1 = 1 XOR 2 = 2	1 XOR 0 AND 0	0 AND 1 OR 1	1 XOR 1 XOR 1	0 OR 1 XOR 1
0	1	1	1	0
> SELECT BIT_COUNT(29), BIT_COUNT(-1), BIT_COUNT(NULL), -1 & 1, 5 | NULL
BIT_COUNT(29)	BIT_COUNT(-1)	BIT_COUNT(NULL)	-1 & 1	5 | NULL
4	64	NULL	1	NULL
# REGEXP and RLIKE: case-sensitive, as every comparison of the binary collation.
> SELECT 'abc' REGEXP '^a', 'abc' RLIKE 'B', 'abc' NOT REGEXP 'z', 'Abc' REGEXP '^a', NULL REGEXP 'a', 'a' REGEXP NULL
'abc' REGEXP '^a'	'abc' RLIKE 'B'	'abc' NOT REGEXP 'z'	'Abc' REGEXP '^a'	NULL REGEXP 'a'	'a' REGEXP NULL
1	0	1	0	NULL	NULL
> SELECT REGEXP_LIKE('Abc', '^a', 'i'), REGEXP_LIKE('Abc', '^a', 'ic'), REGEXP_LIKE('a\nb', 'a.b') AS dot, REGEXP_LIKE('a\nb', 'a.b', 'n') AS dot_n, REGEXP_LIKE('x\nab', '^a', 'm') AS lines
REGEXP_LIKE('Abc', '^a', 'i')	REGEXP_LIKE('Abc', '^a', 'ic')	dot	dot_n	lines
1	0	0	1	1
> SELECT REGEXP_REPLACE('a b c', ' ', '-'), REGEXP_REPLACE('abcabc', 'b', 'X', 1, 2), REGEXP_REPLACE('abcabc', 'b', 'X', 3), REGEXP_REPLACE('abc', '(b)', '[$1]')
REGEXP_REPLACE('a b c', ' ', '-')	REGEXP_REPLACE('abcabc', 'b', 'X', 1, 2)	REGEXP_REPLACE('abcabc', 'b', 'X', 3)	REGEXP_REPLACE('abc', '(b)', '[$1]')
a-b-c	abcaXc	abcaXc	a[b]c
> SELECT REGEXP_SUBSTR('abc def ghi', '[a-z]+', 1, 2), REGEXP_SUBSTR('abc', 'z'), REGEXP_INSTR('dog cat dog', 'dog', 2), REGEXP_INSTR('aa aaa', 'a{3}', 1, 1, 1), REGEXP_INSTR('añb', 'b')
REGEXP_SUBSTR('abc def ghi', '[a-z]+', 1, 2)	REGEXP_SUBSTR('abc', 'z')	REGEXP_INSTR('dog cat dog', 'dog', 2)	REGEXP_INSTR('aa aaa', 'a{3}', 1, 1, 1)	REGEXP_INSTR('añb', 'b')
def	NULL	9	7	3
> SELECT 'a' REGEXP '('
error 3691 (HY000): Mismatched parenthesis in regular expression.
> SELECT 'a' REGEXP '[a'
error 3696 (HY000): The regular expression contains an unclosed bracket expression.
> SELECT REGEXP_LIKE('a', 'a', 'x')
error 1210 (HY000): Incorrect arguments to regexp_like
> SELECT REGEXP_INSTR('abc', 'b', 5)
error 3686 (HY000): Index out of bounds in regular expression search.
> CREATE TABLE words (id INT PRIMARY KEY, w VARCHAR(20))
ok 0
> INSERT INTO words VALUES (1, 'apple'), (2, 'banana'), (3, 'cherry'), (4, 'avocado')
ok 4
> SELECT id, w FROM words WHERE w REGEXP '^a' ORDER BY id
id	w
1	apple
4	avocado
> SELECT id, w FROM words WHERE w RLIKE 'an{1}a$' OR w REGEXP CONCAT('^', 'ch') ORDER BY id
id	w
2	banana
3	cherry
# Runs of negations of any length (each NOT or ! after the first does not nest deeper).
> SELECT NOT NOT NOT 0, NOT NOT 5, NOT NOT NULL, ! ! ! 1, !!!!2, NOT NOT 1 = 2, ! ! 1 = 2
NOT NOT NOT 0	NOT NOT 5	NOT NOT NULL	! ! ! 1	!!!!2	NOT NOT 1 = 2	! ! 1 = 2
1	1	NULL	0	1	0	0
> SELECT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT 1 AS n60, NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT 1 AS n61
n60	n61
1	0
# `||` is OR in the default sql_mode; with PIPES_AS_CONCAT (which sqlx sets) or ANSI it
# concatenates, binding tighter than `^` and `*`. Every answer here is MariaDB 10.11's.
> SELECT 'a' || 'b', 1 || 0, 0 || 0
'a' || 'b'	1 || 0	0 || 0
0	1	0
> SET sql_mode = 'PIPES_AS_CONCAT'
ok 0
> SELECT 'a' || 'b' || 'c', 1 || 0, 'x' || NULL, 1 + 2 || 3, 2 * 3 || 4, 2 ^ 3 || 1, - 1 || 2, 'a' || 'b' = 'ab', 'x' || 1 IS NULL
'a' || 'b' || 'c'	1 || 0	'x' || NULL	1 + 2 || 3	2 * 3 || 4	2 ^ 3 || 1	- 1 || 2	'a' || 'b' = 'ab'	'x' || 1 IS NULL
abc	10	NULL	24	68	29	-12	1	0
> SET sql_mode = (SELECT CONCAT(@@sql_mode, ',NO_ENGINE_SUBSTITUTION'))
ok 0
> SELECT @@sql_mode, 'p' || 'q'
@@sql_mode	'p' || 'q'
PIPES_AS_CONCAT,NO_ENGINE_SUBSTITUTION	pq
> CREATE DATABASE pipes
ok 1
> CREATE VIEW pipes.v AS SELECT 'a' || 'b' AS ab
ok 0
> SET sql_mode = 'ANSI'
ok 0
> SELECT 'a' || 'b'
'a' || 'b'
ab
> SET sql_mode = DEFAULT
ok 0
> SELECT 'a' || 'b', ab FROM pipes.v
'a' || 'b'	ab
0	ab
> DROP DATABASE pipes
ok 0
# With ANSI_QUOTES (or ANSI), `"` quotes an identifier as a backquote does, and only `'` a
# string; without it `"` quotes a string again. MariaDB 10.11 answers the same.
> CREATE DATABASE quotes
ok 1
> SET sql_mode = 'ANSI_QUOTES'
ok 0
> CREATE TABLE quotes.t ("id" INT PRIMARY KEY, "two words" VARCHAR(10))
ok 0
> INSERT INTO quotes.t ("id", "two words") VALUES (1, 'x')
ok 1
> SELECT "id", "two words", "t"."id", `id` FROM quotes."t" WHERE "two words" = 'x'
id	two words	id	id
1	x	1	1
> SELECT "nope" FROM quotes.t
error 1054 (42S22): Unknown column 'nope' in 'field list'
> SET sql_mode = 'ANSI'
ok 0
> SELECT "id" || 'z' FROM quotes.t
"id" || 'z'
1z
> SET sql_mode = DEFAULT
ok 0
> SELECT "id" FROM quotes.t
id
id
> DROP DATABASE quotes
ok 0
