// Passkeys on the sign-in and account pages (docs/decisions.md, "Passkeys"). Served from the
// service's own origin (the pages' policy allows scripts from 'self' only, no inline code). The
// script asks the server for a ceremony's options, runs the browser's WebAuthn call, and posts
// the answer through the page's own form, so CSRF and the page flow stay the server's.
"use strict";
(function () {
  function fromBase64url(text) {
    var padded = text.replace(/-/g, "+").replace(/_/g, "/");
    while (padded.length % 4) padded += "=";
    var raw = atob(padded);
    var bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    return bytes.buffer;
  }
  function toBase64url(buffer) {
    var bytes = new Uint8Array(buffer);
    var raw = "";
    for (var i = 0; i < bytes.length; i++) raw += String.fromCharCode(bytes[i]);
    return btoa(raw).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function descriptors(list) {
    return (list || []).map(function (d) {
      return { type: d.type, id: fromBase64url(d.id), transports: d.transports };
    });
  }
  function post(url, form) {
    var body = new URLSearchParams();
    if (form) body.set("csrf_token", form.elements.csrf_token.value);
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: body.toString(),
    }).then(function (r) {
      if (!r.ok) throw new Error("options refused");
      return r.json();
    });
  }
  function submit(form, ceremony, answer) {
    form.elements.passkey_ceremony.value = ceremony;
    form.elements.passkey_answer.value = JSON.stringify(answer);
    form.submit();
  }
  function showError(form, text) {
    var note = form.querySelector(".passkey-status");
    if (note) note.textContent = text;
  }

  function assertion(credential) {
    var r = credential.response;
    return {
      id: credential.id,
      rawId: toBase64url(credential.rawId),
      type: credential.type,
      extensions: {},
      response: {
        authenticatorData: toBase64url(r.authenticatorData),
        clientDataJSON: toBase64url(r.clientDataJSON),
        signature: toBase64url(r.signature),
        userHandle: r.userHandle ? toBase64url(r.userHandle) : null,
      },
    };
  }
  function requestOptions(options) {
    var pk = options.publicKey;
    return {
      challenge: fromBase64url(pk.challenge),
      rpId: pk.rpId,
      timeout: pk.timeout,
      userVerification: pk.userVerification,
      allowCredentials: descriptors(pk.allowCredentials),
    };
  }

  // Sign-in: the button, and the browser's autofill (conditional mediation) when supported.
  var signIn = document.getElementById("passkey-sign-in");
  if (signIn && window.PublicKeyCredential) {
    var url = signIn.getAttribute("data-options");
    var pending = null;
    var run = function (mediation) {
      if (pending) pending.abort();
      var controller = new AbortController();
      pending = controller;
      return post(url, null).then(function (start) {
        var request = { publicKey: requestOptions(start.options), signal: controller.signal };
        if (mediation) request.mediation = mediation;
        return navigator.credentials.get(request).then(function (credential) {
          if (credential) submit(signIn, start.ceremony, assertion(credential));
        });
      });
    };
    signIn.querySelector("button").disabled = false;
    signIn.querySelector("button").addEventListener("click", function () {
      run(null).catch(function (e) {
        if (e && e.name !== "AbortError") showError(signIn, "No passkey was used.");
      });
    });
    // Not again on a page that shows a refusal: an authenticator that answers at once would
    // be refused in a loop.
    var autofill = signIn.getAttribute("data-autofill") === "on";
    if (autofill && PublicKeyCredential.isConditionalMediationAvailable) {
      PublicKeyCredential.isConditionalMediationAvailable().then(function (available) {
        if (available) run("conditional").catch(function () {});
      });
    }
  }

  // The account page: a new passkey.
  var add = document.getElementById("passkey-add");
  if (add && window.PublicKeyCredential) {
    add.querySelector("button").disabled = false;
    add.querySelector("button").addEventListener("click", function () {
      post(add.getAttribute("data-options"), add).then(function (start) {
        var pk = start.options.publicKey;
        var publicKey = {
          rp: pk.rp,
          user: { id: fromBase64url(pk.user.id), name: pk.user.name, displayName: pk.user.displayName },
          challenge: fromBase64url(pk.challenge),
          pubKeyCredParams: pk.pubKeyCredParams,
          timeout: pk.timeout,
          attestation: pk.attestation,
          authenticatorSelection: pk.authenticatorSelection,
          excludeCredentials: descriptors(pk.excludeCredentials),
          extensions: pk.extensions,
        };
        return navigator.credentials.create({ publicKey: publicKey }).then(function (credential) {
          var r = credential.response;
          submit(add, start.ceremony, {
            id: credential.id,
            rawId: toBase64url(credential.rawId),
            type: credential.type,
            extensions: {},
            response: {
              attestationObject: toBase64url(r.attestationObject),
              clientDataJSON: toBase64url(r.clientDataJSON),
              transports: r.getTransports ? r.getTransports() : undefined,
            },
          });
        });
      }).catch(function () {
        showError(add, "The passkey was not added.");
      });
    });
  }
})();
