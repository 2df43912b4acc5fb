/* What the test doubles' configuration parsers share (cuda_emulated, hip_emulated, nccl_emulated):
 * reading UFORM_*_DOUBLE_CONFIG (the text, or `@path` naming a file), splitting it into lines,
 * and the values more than one double takes (K/M/G/T sizes, `\xNN` names, positive counts,
 * error names). Each double keeps its own line kinds, keys, messages and semantics. Built into
 * each double (its double.cmake); nothing here is exported. */
#ifndef UFORM_DOUBLE_CONFIG_H
#define UFORM_DOUBLE_CONFIG_H

#include <stddef.h>

/** The configuration text in the environment variable `variable`: its value, or the contents of
 *  the file `@path` names (at most `limit` - 1 bytes, in `*owned`, to free; NULL otherwise). NULL
 *  when the variable is unset, or when the file cannot be read, `*unreadable` then being its path
 *  (NULL otherwise). */
const char *double_config_text(const char *variable, size_t limit, char **owned, const char **unreadable);

/** Splits `text` in place into lines at newlines and ';', cuts `#` comments, trims blanks (spaces
 *  and tabs before; spaces, tabs and carriage returns after) and hands each line left non-empty to
 *  `each`, with its number (from 1; empty lines are counted). */
void double_config_lines(char *text, void (*each)(char *line, size_t number, void *context), void *context);

/** Writes "line N: <message>" into `error` unless it holds a refusal already: the first refusal
 *  is the one that explains. */
__attribute__((format(printf, 4, 5))) void double_config_refuse(char *error, size_t capacity, size_t line,
                                                                const char *format, ...);

/** The words of a line of blank-separated `key=value` words, one at a time (double_config_word). */
typedef struct double_config_words_t {
    char *next;  /* where the next word is looked for */
    char *cut;   /* where the last word was cut (restored by the next call); NULL when none */
    char saved;
} double_config_words_t;

/** The next word of `words` (start with {.next = text}), cut out of the text: 1 with its key and
 *  value (`*value` NULL when the word has no '='), 0 at the end. `name=` takes the rest of the line
 *  (names have spaces) and is the last word. */
int double_config_word(double_config_words_t *words, char **key, char **value);

/** A name value into `name`: the text, with `\xNN` escapes so tests can place any byte; cut to
 *  `capacity` - 1 bytes. */
void double_config_name(const char *text, char *name, size_t capacity);

/** The binary shift a size's suffix stands for: "" 0, "K" 10, "M" 20, "G" 30, "T" 40; -1 for
 *  anything else. Each double checks the digits before it in its own way. */
int double_config_size_shift(const char *suffix);

/** Cuts a `key=value` (after leading spaces; the value ends at a blank) in `*key`: the value, or
 *  NULL without '=' (`*key` then past the spaces). */
char *double_config_key_value(char **key);

/** A positive count (`fault alloc=3`): 1 with it in `*count`; 0, writing nothing, for anything
 *  else. */
int double_config_count(const char *text, unsigned long *count);

/** One error a double knows: its name and number. */
typedef struct double_config_error_t {
    const char *name;
    long number;
} double_config_error_t;

/** The number of an error: a name among `errors` or a decimal number (0 or more); -1 if neither. */
long double_config_error(const char *text, const double_config_error_t *errors, size_t count);

#endif
